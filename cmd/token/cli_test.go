package token_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestTokenExpiredExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "carol", "approve")
	clk := &shiftClock{}
	c.Clock = clk
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	clk.shift = 25 * time.Hour
	code, stdout, stderr := c.Run("token")
	if code != cmdutil.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "expired") {
		t.Fatalf("expired token: exit %d stdout %q stderr %s", code, stdout, stderr)
	}
}

// shiftClock is the real clock moved forward by shift (to age tokens).
type shiftClock struct{ shift time.Duration }

func (c *shiftClock) Now() time.Time { return time.Now().Add(c.shift) }

func (c *shiftClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
