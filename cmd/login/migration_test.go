package login_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/keyring"
)

// SEP-2352: the resource's authorization_servers change from A to B. The next
// login registers at B, says so in one line, and B never receives anything
// A issued (client id, access token, refresh token).
func TestLoginAfterAuthorizationServerMigration(t *testing.T) {
	a, b := flowstest.NewServer(t), flowstest.NewServer(t)
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", a.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	old, err := creds.Load(st, a.URL+"/mcp", "")
	if err != nil || old.RefreshToken == "" {
		t.Fatalf("first login stored %v, %v", old, err)
	}

	a.AuthServers = []string{b.URL}
	code, _, stderr := c.Run("login", a.URL+"/mcp")
	if code != 0 {
		t.Fatalf("login after migration: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "moved from "+a.URL+" to "+b.URL) {
		t.Errorf("no migration message: %s", stderr)
	}
	if n := len(b.Registrations()); n != 1 {
		t.Errorf("%d registrations at the new server, want 1", n)
	}
	assertNothingOf(t, old, b)
	now, err := creds.Load(st, a.URL+"/mcp", "")
	if err != nil || now.Issuer != b.URL || now.TokenEndpoint != b.URL+"/oauth/token" || now.Client.ClientID == old.Client.ClientID {
		t.Errorf("after migration stored %v, %v", now, err)
	}
}

// The issuer changes mid-flow (the metadata now claims another issuer than
// the one it was fetched for): discovery refuses it (RFC 8414 §3.3), the
// login fails with exit 6 and the stored credential is left as it was.
func TestLoginIssuerChangedMidFlow(t *testing.T) {
	a := flowstest.NewServer(t)
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", a.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := creds.Load(st, a.URL+"/mcp", "")
	a.IssuerOverride = "https://other.example"
	code, _, stderr := c.Run("login", a.URL+"/mcp")
	if code != 6 || !strings.Contains(stderr, "issuer mismatch") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after, err := creds.Load(st, a.URL+"/mcp", "")
	if err != nil || after.AccessToken != before.AccessToken || after.RefreshToken != before.RefreshToken {
		t.Errorf("a failed login changed the stored credential")
	}
}

// Finding 4: a migration may change whose account the login is (here alice
// at A, then mallory at B). Even with --quiet, stderr names B before the
// browser opens and mallory after; B receives nothing A issued.
func TestLoginMigrationNamesTheNewServerAndAccount(t *testing.T) {
	a, b := flowstest.NewServer(t), flowstest.NewServer(t)
	a.TokenSubject, b.TokenSubject = "alice", "mallory"
	a.NoPing = true // the account comes from the token's sub
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	mcp := a.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp); code != 0 {
		t.Fatal(stderr)
	}
	old := c.Stored(mcp)
	if old.UserID != "alice" {
		t.Fatalf("first login stored user %q, want alice", old.UserID)
	}

	a.AuthServers = []string{b.URL}
	out, errOut := &clitest.Buffer{}, &clitest.Buffer{}
	var beforeBrowser string
	c.Open = func(authURL string) error {
		beforeBrowser = errOut.String()
		return clitest.Follow(authURL)
	}
	if code := c.RunWith(out, errOut, "--quiet", "login", mcp); code != 0 {
		t.Fatalf("login after migration: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(beforeBrowser, "moved from "+a.URL+" to "+b.URL+": logging in at "+b.URL) {
		t.Errorf("before the browser opened, stderr did not name the new authorization server:\n%s", beforeBrowser)
	}
	after := strings.TrimPrefix(errOut.String(), beforeBrowser)
	if !strings.Contains(after, "now logged in at "+b.URL+" as mallory (before: alice at "+a.URL+")") {
		t.Errorf("after the login, stderr did not name the new account:\n%s", errOut.String())
	}
	if now := c.Stored(mcp); now.UserID != "mallory" || now.Issuer != b.URL {
		t.Errorf("stored %q at %s, want mallory at %s", now.UserID, now.Issuer, b.URL)
	}
	assertNothingOf(t, old, b)
}

// assertNothingOf fails when server received anything of old: its client
// id, access token or refresh token.
func assertNothingOf(t *testing.T, old creds.Bundle, server *flowstest.Server) {
	t.Helper()
	if leaked := server.Leaked(map[string]string{"old client id": old.Client.ClientID, "old access token": old.AccessToken,
		"old refresh token": old.RefreshToken}); len(leaked) > 0 {
		t.Errorf("the new authorization server received: %v", leaked)
	}
}
