package ping_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// A server that stops accepting the token: ping exits 3 with the hint.
func TestPingRejectedTokenExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "tess", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	env.Clock.Advance(25 * time.Hour) // the server's clock: the JWT is past exp
	code, stdout, stderr := c.Run("ping")
	if code != cmdutil.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "run: mcpauth login") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
}
