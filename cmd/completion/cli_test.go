package completion_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
)

func TestCompletionOnStdout(t *testing.T) {
	c := clitest.New(t, nil)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := c.Run("completion", shell)
		if code != 0 || !strings.Contains(stdout, "mcpauth") || stderr != "" {
			t.Errorf("%s: exit %d, %d bytes on stdout, stderr %q", shell, code, len(stdout), stderr)
		}
	}
}
