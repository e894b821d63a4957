package login_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// A browser login against an authorization server that advertises and
// requires DPoP (and demands a nonce first): the token comes back bound to
// a key stored with it, ping presents it with a proof, a refresh after
// expiry proves the same key (the server refuses any other for the bound
// refresh token) and keeps it, and --no-dpop asks for a Bearer token, which
// this server refuses.
func TestBrowserLoginWithDPoP(t *testing.T) {
	s := flowstest.NewServer(t)
	clock := flowstest.NewFakeClock(time.Now())
	s.Clock, s.DPoP, s.DPoPNonce, s.TokenTTL = clock, true, "server-nonce", 10*time.Minute
	s.ScopesSupported = []string{"mcp", flows.ScopeOfflineAccess}
	c := clitest.New(t, nil)
	c.Open, c.Clock = clitest.Follow, clock
	if code, _, stderr := c.Run("login", s.URL+"/mcp", "--no-dpop"); code == 0 || !strings.Contains(stderr, "invalid_dpop_proof") {
		t.Fatalf("--no-dpop against a server that requires DPoP: exit %d: %s", code, stderr)
	}
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	first := c.Stored(s.URL + "/mcp")
	if first.TokenType != flows.TokenTypeDPoP || first.DPoPKey == "" || first.RefreshToken == "" {
		t.Fatalf("stored %s token, key %v, refresh token %v", first.TokenType, first.DPoPKey != "", first.RefreshToken != "")
	}
	if code, stdout, stderr := c.Run("ping", s.URL+"/mcp"); code != 0 || strings.TrimSpace(stdout) != "u_fake" {
		t.Fatalf("ping: exit %d %q %s", code, stdout, stderr)
	}
	if code, stdout, _ := c.Run("token", "--header", s.URL+"/mcp"); code != 0 || !strings.HasPrefix(stdout, "Authorization: DPoP "+first.AccessToken+"\nDPoP: ey") {
		t.Fatalf("token --header: %q", stdout)
	}
	clock.Advance(11 * time.Minute) // the access token expired: the next command refreshes
	if code, stdout, stderr := c.Run("ping", s.URL+"/mcp"); code != 0 || strings.TrimSpace(stdout) != "u_fake" {
		t.Fatalf("ping after expiry: exit %d %q %s", code, stdout, stderr)
	}
	second := c.Stored(s.URL + "/mcp")
	if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken || second.DPoPKey != first.DPoPKey || second.TokenType != flows.TokenTypeDPoP {
		t.Fatalf("after the refresh: new token %v, rotated %v, same key %v, type %s", second.AccessToken != first.AccessToken,
			second.RefreshToken != first.RefreshToken, second.DPoPKey == first.DPoPKey, second.TokenType)
	}
	if s.Count("/oauth/token", "refresh_token") == 0 {
		t.Fatal("no refresh ran")
	}
	// Every refresh carried a proof (the login's exchange did, or it would
	// have been refused above).
	for _, r := range s.Requests() {
		if r.Path == "/oauth/token" && r.Form.Get("grant_type") == "refresh_token" && r.Header.Get("DPoP") == "" {
			t.Errorf("a refresh without a proof: %v", r.Form)
		}
	}
	if s.ProofsChecked < 4 {
		t.Errorf("only %d proofs checked", s.ProofsChecked)
	}
}
