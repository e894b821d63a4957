package login_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// A server that registers clients without advertising registration_endpoint
// (Hydra's default): the login's error names --registration-endpoint (and
// --client-id for servers that only take pre-registered clients), and with
// the flag the login registers there and succeeds.
func TestLoginWithUnadvertisedRegistrationEndpoint(t *testing.T) {
	s := flowstest.NewServer(t)
	s.UnadvertisedRegistration = true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	code, _, stderr := c.Run("login", s.URL+"/mcp")
	if code != clierr.ExitFailure || !strings.Contains(stderr, "--registration-endpoint URL") || !strings.Contains(stderr, "--client-id") {
		t.Fatalf("without the flag: exit %d: %s", code, stderr)
	}
	if n := s.Count("/oauth/register", ""); n != 0 {
		t.Fatalf("%d registrations without the flag", n)
	}
	if code, _, stderr := c.Run("login", s.URL+"/mcp", "--registration-endpoint", s.URL+"/oauth/register"); code != 0 {
		t.Fatalf("with the flag: exit %d: %s", code, stderr)
	}
	if n := s.Count("/oauth/register", ""); n != 1 {
		t.Fatalf("%d registrations with the flag, want 1", n)
	}
	if code, _, stderr := c.Run("login", s.URL+"/mcp", "--registration-endpoint", "http://registrar.example.test/register"); code != clierr.ExitUsage || !strings.Contains(stderr, "plain http") {
		t.Fatalf("plain http off loopback: exit %d: %s", code, stderr)
	}
}
