package root_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// With two servers stored, commands that default to "the only server" ask
// which one, listing both.
func TestAmbiguousServerIsAUsageError(t *testing.T) {
	one, two := servertest.New(t, servertest.Options{}), servertest.New(t, servertest.Options{})
	c := clitest.New(t, one)
	for _, env := range []*servertest.Env{one, two} {
		c.Open = clitest.ApprovingBrowser(t, env, "rob", "approve")
		if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, _, stderr := c.Run("token")
	if code != clierr.ExitUsage || !strings.Contains(stderr, one.URL+"/mcp") || !strings.Contains(stderr, two.URL+"/mcp") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// A base URL names the server as well as its MCP URL does.
	if code, stdout, _ := c.Run("ping", two.URL); code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping %s: %d %q", two.URL, code, stdout)
	}
	// A second account for the same server.
	c.Open = clitest.ApprovingBrowser(t, one, "sam", "approve")
	if code, _, stderr := c.Run("login", one.URL+"/mcp", "--account", "work"); code != 0 {
		t.Fatal(stderr)
	}
	_, rob, _ := c.Run("ping", one.URL)
	_, sam, _ := c.Run("ping", one.URL, "--account", "work")
	if rob == sam || !strings.HasPrefix(sam, "u_") {
		t.Fatalf("accounts mixed up: default %q, work %q", rob, sam)
	}
	code, _, stderr = c.Run("logout", "--all")
	if code != 0 || strings.Count(stderr, "Logged out of") != 3 {
		t.Fatalf("logout --all: %d %s", code, stderr)
	}
	code, stdout, _ := c.Run("status", "-o", "json")
	if code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Fatalf("status after logout --all: %s", stdout)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	c := clitest.New(t, nil)
	for _, args := range [][]string{
		{"login"},
		{"login", "http://127.0.0.1:1/mcp", "--bogus"},
		{"status", "-o", "yaml"},
		{"logout", "http://127.0.0.1:1/mcp", "--all"},
		{"completion", "tcsh"},
		{"status", "--storage", "cloud"},
	} {
		if code, _, stderr := c.Run(args...); code != clierr.ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// Unreachable server: exit 6.
func TestUnreachableServerExits6(t *testing.T) {
	c := clitest.New(t, nil)
	code, _, stderr := c.Run("discover", "http://127.0.0.1:9/mcp")
	if code != clierr.ExitNetwork {
		t.Fatalf("exit %d, want %d: %s", code, clierr.ExitNetwork, stderr)
	}
	c.Vars["MCPAUTH_TOKEN"] = "x"
	if code, _, stderr := c.Run("ping", "http://127.0.0.1:9"); code != clierr.ExitNetwork {
		t.Fatalf("ping: exit %d, want %d: %s", code, clierr.ExitNetwork, stderr)
	}
}
