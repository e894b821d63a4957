package token_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func login(t *testing.T, env *servertest.Env, c *clitest.CLI) creds.Bundle {
	t.Helper()
	c.Open = clitest.ApprovingBrowser(t, env, "carol", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	return stored(t, c, env)
}

func stored(t *testing.T, c *clitest.CLI, env *servertest.Env) creds.Bundle {
	t.Helper()
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	b, err := creds.Load(st, env.URL+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An expired access token is refreshed, the rotated pair is saved before the
// token is printed, and the spent refresh token is refused afterwards.
func TestTokenRefreshesExpired(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	clk := &shiftClock{}
	c.Clock = clk
	before := login(t, env, c)
	if before.RefreshToken == "" || before.TokenEndpoint == "" {
		t.Fatalf("login stored no refresh token or token endpoint: %v", before)
	}
	if !strings.Contains(before.Scope, "offline_access") {
		t.Errorf("scope %q lacks offline_access", before.Scope)
	}

	// Within 60 s of expiry counts as expiring.
	clk.shift = time.Until(before.Expiry) - 30*time.Second
	env.Clock.Advance(clk.shift)
	code, stdout, stderr := c.Run("token")
	if code != 0 || strings.TrimSpace(stdout) == before.AccessToken {
		t.Fatalf("expiring token not refreshed: exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	after := stored(t, c, env)
	if strings.TrimSpace(stdout) != after.AccessToken || after.RefreshToken == before.RefreshToken || after.RefreshToken == "" {
		t.Fatalf("rotated pair not saved before use")
	}
	// Valid again: no second refresh.
	if _, stdout2, _ := c.Run("token"); strings.TrimSpace(stdout2) != after.AccessToken {
		t.Errorf("a fresh token was refreshed again")
	}
	// The old refresh token is spent.
	resp, err := http.PostForm(env.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {before.RefreshToken}, "client_id": {before.Client.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusBadRequest || e.Error != "invalid_grant" {
		t.Errorf("old refresh token: HTTP %d %q, want 400 invalid_grant", resp.StatusCode, e.Error)
	}
}

// A refresh the server refuses (the family revoked because the old token
// was replayed above, or expired) is exit 3 with the login hint, and the
// stored entry is left as it was.
func TestTokenRefreshRefusedExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	clk := &shiftClock{}
	c.Clock = clk
	before := login(t, env, c)
	clk.shift = 31 * 24 * time.Hour // past the refresh family's 30 days
	env.Clock.Advance(clk.shift)
	code, stdout, stderr := c.Run("token")
	if code != clierr.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "run: mcpauth login "+env.URL+"/mcp") ||
		strings.Contains(stderr, before.RefreshToken) {
		t.Fatalf("refused refresh: exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	if after := stored(t, c, env); after.RefreshToken != before.RefreshToken || after.AccessToken != before.AccessToken {
		t.Errorf("a refused refresh changed the stored entry")
	}
}

// shiftClock is the real clock moved forward by shift (to age tokens).
type shiftClock struct{ shift time.Duration }

func (c *shiftClock) Now() time.Time { return time.Now().Add(c.shift) }

func (c *shiftClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
