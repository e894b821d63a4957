package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// alternating sends each request to the next of several instances in turn,
// as a round-robin balancer without sticky sessions would.
type alternating struct {
	hosts    []string
	n        atomic.Int64
	token    string
	sessions atomic.Int64 // responses that set Mcp-Session-Id
}

func (a *alternating) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	host := a.hosts[int(a.n.Add(1))%len(a.hosts)]
	r.URL.Host, r.Host = host, host
	r.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		a.sessions.Add(1)
	}
	return resp, err
}

// /mcp is stateless: a go-sdk client whose requests alternate between two
// instances on one store calls whoami, in the current protocol version and
// in 2025-11-25 (negotiated by initialize), and no response opens a
// session.
func TestMCPStatelessAcrossInstances(t *testing.T) {
	t.Parallel()
	st := memory.New()
	key := bytes.Repeat([]byte("k"), 32)
	var hits [2]atomic.Int64
	var hosts []string
	var first *server.Server
	for i := range hits {
		// One public base URL for both, as behind a balancer.
		srv, err := server.New(context.Background(), server.Config{BaseURL: "http://127.0.0.1:1", Store: st, SigningKey: key})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = srv
		}
		h := srv.Handler()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		hosts = append(hosts, ts.Listener.Addr().String())
	}
	tok, err := first.IssueTokenForTest("u_roundrobin")
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct{ ask, want string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}} {
		t.Run("version "+tt.want, func(t *testing.T) {
			rt := &alternating{hosts: hosts, token: tok}
			before := [2]int64{hits[0].Load(), hits[1].Load()}
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: "http://" + hosts[0] + "/mcp", HTTPClient: &http.Client{Transport: rt},
			}, &mcp.ClientSessionOptions{ProtocolVersion: tt.ask})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer sess.Close()
			if v := sess.InitializeResult().ProtocolVersion; v != tt.want {
				t.Fatalf("negotiated %s, want %s", v, tt.want)
			}
			for range 3 {
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
				if err != nil || res.IsError {
					t.Fatalf("whoami: %+v %v", res, err)
				}
				out, _ := json.Marshal(res.StructuredContent)
				var got struct {
					UserID string `json:"user_id"`
				}
				_ = json.Unmarshal(out, &got)
				if got.UserID != "u_roundrobin" {
					t.Fatalf("whoami = %s", out)
				}
			}
			for i := range hits {
				if n := hits[i].Load() - before[i]; n < 2 {
					t.Fatalf("instance %d served %d requests; the test did not alternate", i, n)
				}
			}
			if n := rt.sessions.Load(); n != 0 {
				t.Fatalf("%d responses set Mcp-Session-Id", n)
			}
		})
	}
}
