package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/keyring/keyringtest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// Switching from file storage to the keyring moves the logins kept in
// plain files into it, naming each: they keep working instead of being
// refused (exit 7). Where the keyring is away, they stay, and it says so.
func TestSetStorageAutoMovesFileLogins(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t)
	c.Env = env
	kr := &keyringtest.Memory{}
	c.Backend = kr
	c.Open = clitest.ApprovingBrowser(t, env, "mo", "approve")
	if code, _, stderr := c.Run("config", "set", "storage", "file"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}

	kr.SetUnavailable(errors.New("dbus: no session bus"))
	code, _, stderr := c.Run("config", "set", "storage", "auto")
	if code != 0 || !strings.Contains(stderr, "the logins stored in plain files (1) stay there") || !strings.Contains(stderr, "--storage=file") {
		t.Fatalf("set auto without a keyring: exit %d %s", code, stderr)
	}
	if code, _, _ := c.Run("token", "--storage=file"); code != 0 {
		t.Fatalf("token --storage=file after a move that could not happen: exit %d", code)
	}

	kr.SetUnavailable(nil)
	code, _, stderr = c.Run("config", "set", "storage", "auto")
	if code != 0 || !strings.Contains(stderr, "Moved the login for "+env.URL+"/mcp (default) from a plain file into the OS keyring") {
		t.Fatalf("set auto: exit %d %s", code, stderr)
	}
	if code, stdout, stderr := c.Run("token"); code != 0 || strings.TrimSpace(stdout) == "" {
		t.Fatalf("token after the move: exit %d (%d is the refusal of a plain file) %s", code, clierr.ExitStorage, stderr)
	}
	if code, stdout, _ := c.Run("status", "-o", "json"); code != 0 || !strings.Contains(stdout, `"backend": "keyring"`) {
		t.Fatalf("status after the move: exit %d %s", code, stdout)
	}
}
