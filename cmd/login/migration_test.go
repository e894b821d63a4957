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
	for _, r := range b.Requests() {
		seen := r.Body + " " + r.Form.Encode() + " " + r.Header.Get("Authorization")
		for _, secret := range []string{old.Client.ClientID, old.AccessToken, old.RefreshToken} {
			if strings.Contains(seen, secret) {
				t.Errorf("the new server received %q from the old one in %s %s", secret, r.Method, r.Path)
			}
		}
	}
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
