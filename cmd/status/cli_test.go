package status_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestStatusGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Clock = &fixedClock{env.Clock}
	c.Open = clitest.ApprovingBrowser(t, env, "hana", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	code, stdout, stderr := c.Run("status")
	if code != 0 || !strings.Contains(stderr, "protected only by file permissions") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	clitest.Golden(t, "status.txt", stdout)
	code, stdout, stderr = c.Run("status", "-o", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	clitest.Golden(t, "status.json", stdout)
	if code, stdout, _ := c.Run("status", "--account", "nobody"); code != 0 || !strings.Contains(stdout, "default") {
		t.Fatalf("status lists every account: %s", stdout)
	}
}

// fixedClock reads the server's fake clock and waits for real.
type fixedClock struct{ c *clock.Fake }

func (f *fixedClock) Now() time.Time { return f.c.Now() }

func (f *fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
