package root_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
)

// --version answers as `mcpauth version` does (it was an unknown flag,
// exit 2).
func TestVersionFlag(t *testing.T) {
	c := clitest.New(t, nil)
	code, flag, stderr := c.Run("--version")
	if code != 0 || !strings.HasPrefix(flag, "mcpauth ") {
		t.Fatalf("--version: exit %d %q %s", code, flag, stderr)
	}
	if _, cmd, _ := c.Run("version"); cmd != flag {
		t.Errorf("--version says %q, version says %q", flag, cmd)
	}
}

// A mistyped flag is a usage error that names the flags it is close to.
func TestMistypedFlagSuggestsNames(t *testing.T) {
	c := clitest.New(t, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "http://127.0.0.1:1/mcp", "--clientid", "x"}, "unknown flag: --clientid: did you mean --client-id?"},
		{[]string{"status", "--acount", "x"}, "did you mean --account?"}, // a global flag
		{[]string{"logout", "--al"}, "did you mean --all?"},
	} {
		code, _, stderr := c.Run(tt.args...)
		if code != clierr.ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d %q, want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if _, _, stderr := c.Run("login", "--no-such-flag"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a flag close to nothing got a suggestion: %s", stderr)
	}
}
