package server_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
)

// A reuse within the interval is checked as a refresh is: a scope beyond
// the grant's or another resource is refused with the error a refresh of
// the live token gets for the same request, and revokes nothing. A scope
// narrower than the kept pair's is refused too: the reuse can only give
// that pair, which would be wider than asked.
func TestRefreshReuseChecksLikeRefresh(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{RefreshReuseInterval: 10 * time.Second})
	c := refreshClient(t, env)
	first := c.offline(env.Browser("checks"))
	second := c.mustRefresh(first.RefreshToken, nil)
	env.Clock.Advance(time.Second)
	for _, tc := range []struct {
		name string
		ask  url.Values
		code string
	}{
		{"wider scope", url.Values{"scope": {"mcp offline_access admin"}}, "invalid_scope"},
		{"another resource", url.Values{"resource": {"https://other.example/mcp"}}, "invalid_target"},
	} {
		resp, body := c.refresh(second.RefreshToken, tc.ask)
		oauthErr(t, resp, body, http.StatusBadRequest, tc.code)
		resp, body = c.refresh(first.RefreshToken, tc.ask)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: reuse got %d, want refused as the refresh was", tc.name, resp.StatusCode)
		}
		oauthErr(t, resp, body, http.StatusBadRequest, tc.code)
	}
	resp, body := c.refresh(first.RefreshToken, url.Values{"scope": {"mcp"}})
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_scope")

	// Nothing was revoked: the reuse as the rotation was asked still gets
	// the pair, which works.
	resp, body = c.refresh(first.RefreshToken, url.Values{"scope": {"mcp offline_access"}})
	mustTokenAged(t, resp, body, time.Second)
	var again refreshBody
	mustJSON(t, body, &again)
	if again.AccessToken != second.AccessToken || again.RefreshToken != second.RefreshToken {
		t.Fatal("a reuse within the interval got another pair")
	}
	userID(t, env, second.AccessToken)
	c.mustRefresh(second.RefreshToken, nil)
}
