package login_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// A second login to the same server and account replaces the stored token:
// the replaced refresh token is revoked at the server (it would otherwise
// stay valid for up to 30 days, held nowhere), and the new one works.
func TestLoginRevokesTheTokenItReplaces(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "rita", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	first := c.Stored(env.URL + "/mcp")
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != 0 || !strings.Contains(stderr, "Revoked the refresh token at "+env.URL) {
		t.Fatalf("second login: exit %d: %s", code, stderr)
	}
	resp, err := http.PostForm(env.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {first.RefreshToken}, "client_id": {first.Client.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the replaced refresh token: HTTP %d, want 400", resp.StatusCode)
	}
	if code, _, stderr := c.Run("ping"); code != 0 {
		t.Fatalf("ping with the new token: exit %d: %s", code, stderr)
	}
}
