package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds the credential to every request of the MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// A real MCP client (go-sdk) reaches the whoami tool with a JWT and with an
// API key, and is turned away without a credential.
func TestMCPWhoami(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("mona")
	jwt := c.token(b)
	key, err := b.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, body := ping(t, env, jwt)
	var me struct {
		UserID string `json:"user_id"`
		Name   string `json:"name"`
	}
	mustJSON(t, body, &me)
	// The name is a documented extension of /api/ping and whoami.
	if me.Name != "mona" {
		t.Fatalf("ping name = %q, want mona (%s)", me.Name, body)
	}

	for name, cred := range map[string]string{"jwt": jwt, "api_key": key} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: env.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{cred}},
			}, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer sess.Close()
			tools, err := sess.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "whoami" {
				t.Fatalf("tools: %+v %v", tools, err)
			}
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			if err != nil || res.IsError {
				t.Fatalf("whoami: %+v %v", res, err)
			}
			out, _ := json.Marshal(res.StructuredContent)
			var got struct {
				UserID string `json:"user_id"`
				Via    string `json:"via"`
				Name   string `json:"name"`
			}
			_ = json.Unmarshal(out, &got)
			if got.UserID != me.UserID || got.Via != name || got.Name != "mona" {
				t.Fatalf("whoami = %s, want user %s via %s", out, me.UserID, name)
			}
		})
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	resp, body := do(t, http.MethodPost, env.URL+"/mcp", "application/json", init, nil)
	wantChallenge(t, env, resp, body, false)
	resp, body = do(t, http.MethodPost, env.URL+"/mcp", "application/json", init, http.Header{"Authorization": {"Bearer " + jwt + "x"}})
	wantChallenge(t, env, resp, body, true)

	// The SDK's client, too, is turned away without a credential.
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: env.URL + "/mcp"}, nil); err == nil {
		sess.Close()
		t.Fatal("MCP client connected without a credential")
	}
}
