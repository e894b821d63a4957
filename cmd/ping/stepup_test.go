package ping_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// follow plays the browser against flowstest.Server: its /authorize
// approves at once, so following the redirects reaches the CLI.
// authorizeScopes lists the scopes of the browser's authorization
// requests, leaving out the CLI's own check of each request before it opens
// the browser (a JSON GET, see flows.AuthCodeConfig).
func authorizeScopes(s *flowstest.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Path == "/oauth/authorize" && r.Header.Get("Accept") != "application/json" {
			out = append(out, r.Form.Get("scope"))
		}
	}
	return out
}

// A 403 insufficient_scope: without --step-up ping says which scope and how
// to get it (exit 4); with it, it logs in again for the union once and
// succeeds.
func TestPingStepUp(t *testing.T) {
	s := flowstest.NewServer(t)
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	s.Required = []string{"files:read"}
	code, _, stderr := c.Run("ping")
	if code != clierr.ExitDenied || !strings.Contains(stderr, `needs scope "files:read"`) || !strings.Contains(stderr, "--step-up") {
		t.Fatalf("without --step-up: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := c.Run("ping", "--step-up")
	if code != 0 || strings.TrimSpace(stdout) != "u_fake" {
		t.Fatalf("--step-up: exit %d stdout %q: %s", code, stdout, stderr)
	}
	got := authorizeScopes(s)
	if len(got) != 2 || got[1] != "mcp offline_access files:read" {
		t.Errorf("authorization scopes %q, want the union second", got)
	}
}

// An authorization server that never grants what the resource wants: two
// re-authorizations, then exit 4 naming what was asked for and refused.
func TestPingStepUpBounded(t *testing.T) {
	s := flowstest.NewServer(t)
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	s.Required = []string{"admin"}
	s.Grantable = []string{"mcp", "offline_access"}
	code, _, stderr := c.Run("ping", "--step-up")
	if code != clierr.ExitDenied || !strings.Contains(stderr, `asked for "mcp offline_access admin"`) || !strings.Contains(stderr, `still required "admin"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(authorizeScopes(s)); n != 3 {
		t.Errorf("%d authorizations, want 1 login + 2 step-ups", n)
	}
}
