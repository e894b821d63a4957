package root_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// Issue 17 (1): one yes to the file fallback is remembered; later commands,
// writing or reading, use file storage without asking, until config set
// storage auto or an explicit --storage says otherwise.
func TestFileFallbackRemembered(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	delete(c.Vars, "MCPAUTH_STORAGE")
	c.Backend, c.TTY, c.Stdin = absentBackend{}, true, "y\n"
	c.Open = clitest.ApprovingBrowser(t, env, "ria", "approve")
	const prompt = "without keyring protection? [y/N]"
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 || !strings.Contains(stderr, prompt) {
		t.Fatalf("first login: exit %d %s", code, stderr)
	}
	c.Stdin = "" // a second question would read EOF and be declined
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 || strings.Contains(stderr, prompt) || !strings.Contains(stderr, "Using file storage as remembered (OS keyring unavailable, since ") {
		t.Fatalf("second login asked again or failed: exit %d %s", code, stderr)
	}
	c.TTY = false
	for _, args := range [][]string{{"status"}, {"token"}, {"ping"}} {
		code, stdout, stderr := c.Run(args...)
		if code != 0 || strings.TrimSpace(stdout) == "" || strings.Contains(stderr, prompt) {
			t.Fatalf("%s: exit %d %q %s", args[0], code, stdout, stderr)
		}
	}
	if code, stdout, stderr := c.Run("config", "get", "storage"); code != 0 || stdout != "file\n" || !strings.Contains(stderr, "OS keyring unavailable") {
		t.Fatalf("config get storage: exit %d %q %s", code, stdout, stderr)
	}
	// An explicit choice wins for one command.
	if code, _, _ := c.Run("token", "--storage=keyring"); code != clierr.ExitStorage {
		t.Fatalf("token --storage=keyring: exit %d, want %d", code, clierr.ExitStorage)
	}
	// Back to auto: the next storing command asks again.
	if code, _, stderr := c.Run("config", "set", "storage", "auto"); code != 0 {
		t.Fatal(stderr)
	}
	c.TTY = true
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != clierr.ExitStorage || !strings.Contains(stderr, prompt) {
		t.Fatalf("login after set auto: exit %d %s", code, stderr)
	}
}
