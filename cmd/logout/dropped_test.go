package logout_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/keyring/keyringtest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

var errNoBus = errors.New("dbus: no session bus (DBUS_SESSION_BUS_ADDRESS unset)")

// stored reads the bundle a login left, in whichever storage holds it.
func stored(t *testing.T, c *clitest.CLI, server string) creds.Bundle {
	t.Helper()
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"], Backend: c.Backend})
	if err != nil {
		t.Fatal(err)
	}
	b, err := creds.Load(st, server, "")
	if err != nil || b.RefreshToken == "" {
		t.Fatalf("stored %v, %v: want a refresh token", b, err)
	}
	return b
}

// refreshWorks redeems b's refresh token at the server: false once the
// server revoked it.
func refreshWorks(t *testing.T, env *servertest.Env, b creds.Bundle) bool {
	t.Helper()
	resp, err := http.PostForm(env.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {b.RefreshToken}, "client_id": {b.Client.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// keyringLogin logs in with storage (auto or keyring) on a keyring held
// in memory, which the test may then take away.
func keyringLogin(t *testing.T, storage string) (*servertest.Env, *clitest.CLI, *keyringtest.Memory) {
	t.Helper()
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	kr := &keyringtest.Memory{}
	c.Vars["MCPAUTH_STORAGE"], c.Backend = storage, kr
	c.Open = clitest.ApprovingBrowser(t, env, "lou", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	return env, c, kr
}

// With the keyring gone (no D-Bus), a keyring-sealed token cannot be read
// to revoke it: logout --all says so, names what stays valid and until
// when, and claims no logout.
func TestLogoutWithoutKeyringSaysWhatStaysValid(t *testing.T) {
	env, c, kr := keyringLogin(t, "auto")
	b := stored(t, c, env.URL+"/mcp")
	kr.SetUnavailable(errNoBus)
	code, _, stderr := c.Run("logout", "--all")
	if code != 0 {
		t.Fatalf("logout --all: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"nothing was revoked", "no session bus", "The access token stays valid until 2026-", "and the refresh token until", "on this machine only"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("logout --all without a keyring does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "✓") || strings.Contains(stderr, "Logged out") {
		t.Errorf("logout claims a logout the server never saw:\n%s", stderr)
	}
	if !refreshWorks(t, env, b) {
		t.Error("the refresh token was revoked after all: the message is wrong")
	}
}

// A keyring login that replaces one stored in a plain file revokes the
// file's token: the server refuses its refresh token afterwards.
func TestKeyringLoginRevokesTheFileLoginItReplaces(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Backend = &keyringtest.Memory{}
	c.Open = clitest.ApprovingBrowser(t, env, "lou", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	old := stored(t, c, env.URL+"/mcp")
	c.Vars["MCPAUTH_STORAGE"] = "keyring"
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != 0 || !strings.Contains(stderr, "Revoked the refresh token") {
		t.Fatalf("keyring login over a file login: exit %d: %s", code, stderr)
	}
	if refreshWorks(t, env, old) {
		t.Error("the replaced file login's refresh token still works")
	}
}

// A file login that replaces a keyring login while the keyring is gone
// cannot revoke it, and says what stays valid instead of nothing.
func TestFileLoginOverAnUnreadableKeyringLoginSaysWhatStaysValid(t *testing.T) {
	env, c, kr := keyringLogin(t, "keyring")
	kr.SetUnavailable(errNoBus)
	c.Vars["MCPAUTH_STORAGE"] = "file"
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != 0 || !strings.Contains(stderr, "nothing was revoked") || !strings.Contains(stderr, "refresh token until") {
		t.Fatalf("file login over an unreadable keyring login: exit %d: %s", code, stderr)
	}
}
