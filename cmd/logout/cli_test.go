package logout_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows/flowstest"
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

// Where nothing can be revoked, logout says what stays valid: an OAuth
// token on a server without a revocation endpoint until its expiry, an API
// key until it is regenerated.
func TestLogoutSaysWhatStaysValid(t *testing.T) {
	s := flowstest.NewServer(t)
	s.NoRevocation = true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := c.Run("logout")
	if code != 0 || !strings.Contains(stderr, "The access token stays valid until 20") || !strings.Contains(stderr, "offers no revocation endpoint") {
		t.Fatalf("logout exit %d: %s", code, stderr)
	}

	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("erin").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	k := clitest.New(t, env)
	k.Stdin = key + "\n"
	if code, _, stderr := k.Run("apikey", "set", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	k.Stdin = ""
	if code, _, stderr := k.Run("logout"); code != 0 || !strings.Contains(stderr, "The API key still works") || !strings.Contains(stderr, "until it is regenerated") {
		t.Fatalf("logout of an API key: exit %d: %s", code, stderr)
	}
}
