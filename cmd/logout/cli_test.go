package logout_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// logout revokes the refresh token at the revocation endpoint (RFC 7009)
// before deleting it: the server refuses it afterwards.
func TestLogoutRevokes(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "lou", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	b, err := creds.Load(st, env.URL+"/mcp", "")
	if err != nil || b.RefreshToken == "" || b.RevocationEndpoint == "" {
		t.Fatalf("stored %v, %v: want a refresh token and a revocation endpoint", b, err)
	}
	code, _, stderr := c.Run("logout")
	if code != 0 || !strings.Contains(stderr, "Revoked the refresh token") {
		t.Fatalf("logout exit %d: %s", code, stderr)
	}
	if _, err := creds.Load(st, env.URL+"/mcp", ""); err == nil {
		t.Error("still stored after logout")
	}
	resp, err := http.PostForm(env.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {b.RefreshToken}, "client_id": {b.Client.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("revoked refresh token: HTTP %d, want 400", resp.StatusCode)
	}
}
