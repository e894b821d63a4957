package tsserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Two servers running side by side get their own ports and each names itself, not the
// other, in its metadata and in its challenge.
func TestStartTwoSideBySide(t *testing.T) {
	servers := []*tsserver.Server{tsserver.Start(t), tsserver.Start(t)}
	if servers[0].MCPURL == servers[1].MCPURL || servers[0].AuthURL == servers[1].AuthURL {
		t.Fatalf("two servers share a port: %+v %+v", servers[0], servers[1])
	}
	for _, s := range servers {
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		getJSON(t, strings.Replace(s.MCPURL, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1), &prm)
		if prm.Resource != s.MCPURL || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != s.AuthURL+"/" {
			t.Errorf("%s: protected resource metadata %+v", s.MCPURL, prm)
		}
		var asm struct {
			Issuer               string `json:"issuer"`
			RegistrationEndpoint string `json:"registration_endpoint"`
		}
		getJSON(t, s.AuthURL+"/.well-known/oauth-authorization-server", &asm)
		if asm.Issuer != s.AuthURL+"/" || asm.RegistrationEndpoint != s.AuthURL+"/register" {
			t.Errorf("%s: authorization server metadata %+v", s.AuthURL, asm)
		}
		resp, err := http.Post(s.MCPURL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="`+strings.Replace(s.MCPURL, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)+`"`) {
			t.Errorf("%s without a token: %s, WWW-Authenticate %q", s.MCPURL, resp.Status, ch)
		}
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// Restart keeps the URLs and forgets every client and token.
func TestRestart(t *testing.T) {
	s := tsserver.Start(t)
	mcpURL, authURL := s.MCPURL, s.AuthURL
	reg, err := flows.Register(context.Background(), http.DefaultClient, s.AuthURL+"/register", flows.ClientMetadata{
		RedirectURIs: []string{"http://127.0.0.1:1/callback"}, TokenEndpointAuthMethod: "none"})
	if err != nil {
		t.Fatal(err)
	}
	authorize := s.AuthURL + "/authorize?response_type=code&code_challenge=" + strings.Repeat("a", 43) +
		"&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback&client_id=" + reg.ClientID
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Get(authorize); err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize before the restart: %v %v", resp, err)
	}
	s.Restart(t)
	if s.MCPURL != mcpURL || s.AuthURL != authURL {
		t.Fatalf("URLs changed: %s %s", s.MCPURL, s.AuthURL)
	}
	resp, err := noFollow.Get(authorize)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("authorize with a client registered before the restart: %s, want 400", resp.Status)
	}
}
