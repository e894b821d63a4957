package ping_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The server stops accepting the token before the CLI thinks it expired (its
// clock is ahead): the 401 invalid_token is retried once after a refresh.
func TestPingRefreshesOn401(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "tess", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	env.Clock.Advance(25 * time.Hour) // the server's clock: the JWT is past exp
	code, stdout, stderr := c.Run("ping")
	if code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
}

// When the refresh is refused too, ping exits 3 with the hint.
func TestPingRejectedTokenExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "tess", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	env.Clock.Advance(31 * 24 * time.Hour) // past the refresh family's life too
	code, stdout, stderr := c.Run("ping")
	if code != clierr.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "run: mcpauth login") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
}
