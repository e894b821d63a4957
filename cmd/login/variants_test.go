package login_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// A 2025-03-26 server with no metadata at all: login warns and uses the
// default endpoints; a root document naming the origin is stored under the
// MCP URL, so `ping <mcp-url>` finds it.
func TestLoginDiscoveryVariants(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(*flowstest.Server)
		check func(t *testing.T, s *flowstest.Server, b creds.Bundle, stderr string)
	}{
		{"2025-03-26 default endpoints", func(s *flowstest.Server) { s.Legacy, s.NoASMetadata = true, true },
			func(t *testing.T, s *flowstest.Server, b creds.Bundle, stderr string) {
				if !strings.Contains(stderr, "default endpoints") || b.TokenEndpoint != s.URL+"/token" ||
					s.Count("/register", "") != 1 || s.Count("/token", "authorization_code") != 1 {
					t.Errorf("token endpoint %q; stderr %s", b.TokenEndpoint, stderr)
				}
			}},
		{"root resource is the origin", func(s *flowstest.Server) { s.RootPRMOnly, s.PRMResource = true, s.URL },
			func(t *testing.T, s *flowstest.Server, b creds.Bundle, stderr string) {
				if b.Resource != s.URL {
					t.Errorf("resource %q, want the origin", b.Resource)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := flowstest.NewServer(t)
			c.setup(s)
			cli := clitest.New(t, nil)
			cli.Open = clitest.Follow
			code, _, stderr := cli.Run("login", s.URL+"/mcp")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b := cli.Stored(s.URL + "/mcp")
			c.check(t, s, b, stderr)
			if code, stdout, stderr := cli.Run("ping", s.URL+"/mcp"); code != 0 || strings.TrimSpace(stdout) != "u_fake" {
				t.Errorf("ping: exit %d %q %s", code, stdout, stderr)
			}
		})
	}
}
