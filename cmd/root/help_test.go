package root_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
)

// Help goes to stdout, so `mcpauth login --help | less` shows it, wrapped
// to the terminal (COLUMNS), or to 80 columns in a pipe; usage errors stay
// on stderr.
func TestHelpOnStdoutWrapped(t *testing.T) {
	cmds := [][]string{{}, {"login"}, {"serve"}, {"conformance"}, {"proxy"}, {"device"}, {"status"}, {"apikey"}, {"apikey", "set"}, {"config"}}
	for _, width := range []int{0, 60, 80, 120} {
		c := clitest.New(t, nil)
		if width > 0 {
			c.Vars["COLUMNS"] = strconv.Itoa(width)
		}
		limit := width
		if limit == 0 {
			limit = 80
		}
		for _, args := range cmds {
			code, stdout, stderr := c.Run(append(args, "--help")...)
			name := strings.Join(append([]string{"mcpauth"}, args...), " ")
			if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage:\n") {
				t.Fatalf("COLUMNS=%d %s --help: exit %d, stderr %q, stdout:\n%s", width, name, code, stderr, stdout)
			}
			for _, line := range strings.Split(stdout, "\n") {
				if lipgloss.Width(line) > limit {
					t.Errorf("COLUMNS=%d %s --help: line of %d columns:\n%s", width, name, lipgloss.Width(line), line)
				}
			}
		}
	}
	// A flag's usage stays readable: the env var name is whole.
	c := clitest.New(t, nil)
	c.Vars["COLUMNS"] = "80"
	if _, stdout, _ := c.Run("serve", "--help"); !strings.Contains(stdout, "MCPAUTH_ALLOW_UNREGISTERED_DEVICE_CLIENTS") {
		t.Errorf("serve --help lost a word:\n%s", stdout)
	}
	// Examples wrap as shell continuations, still one command each.
	c.Vars["COLUMNS"] = "60"
	if _, stdout, _ := c.Run("conformance", "--help"); !strings.Contains(stdout, "--clock-url \\\n      http://") {
		t.Errorf("conformance --help example not continued with a backslash:\n%s", stdout)
	}
	code, stdout, stderr := c.Run("login", "--no-such-flag")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "unknown flag: --no-such-flag") {
		t.Errorf("unknown flag: exit %d, stdout %q, stderr %q; want exit 2 and the error on stderr only", code, stdout, stderr)
	}
}

// The command list keeps one column for the descriptions, wrapped ones
// included, at 80 columns (also a pipe's width) and at 120.
func TestHelpGolden(t *testing.T) {
	for _, width := range []string{"80", "120"} {
		c := clitest.New(t, nil)
		c.Vars["COLUMNS"] = width
		code, stdout, stderr := c.Run("--help")
		if code != 0 {
			t.Fatalf("COLUMNS=%s --help: exit %d %s", width, code, stderr)
		}
		clitest.Golden(t, "help-"+width+".txt", stdout)
	}
}
