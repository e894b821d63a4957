package ping_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// A server that speaks OpenID Connect names the user in its ID token: the
// CLI shows the name (then preferred_username, then email) in login,
// status and ping, with the sub as the id; without such claims it shows the
// sub; a forged ID token (signed with a key the issuer does not publish)
// never names anyone.
func TestLoginShowsIDTokenIdentity(t *testing.T) {
	for _, c := range []struct {
		name   string
		claims map[string]any
		forge  bool
		want   string // in login's, status's and ping's output
		absent string
	}{
		{"name", map[string]any{"sub": "8f3a9c", "name": "Mona Lisa", "email": "mona@example.com"}, false, "Mona Lisa (8f3a9c)", ""},
		{"email only", map[string]any{"sub": "8f3a9c", "email": "mona@example.com"}, false, "mona@example.com (8f3a9c)", ""},
		{"sub only", map[string]any{"sub": "8f3a9c"}, false, "8f3a9c", ""},
		{"forged", map[string]any{"sub": "8f3a9c", "name": "Administrator"}, true, "", "Administrator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := flowstest.NewServer(t)
			s.NoPing, s.MCPHandler, s.IDTokenClaims, s.ForgeIDToken = true, mcpServer(), c.claims, c.forge
			cli := clitest.New(t, nil)
			cli.Open = clitest.Follow
			code, _, loginErr := cli.Run("login", s.URL+"/mcp")
			if code != 0 {
				t.Fatalf("login: exit %d: %s", code, loginErr)
			}
			_, status, statusErr := cli.Run("status")
			_, _, pingErr := cli.Run("ping")
			for cmd, out := range map[string]string{"login": loginErr, "status": status + statusErr, "ping": pingErr} {
				if c.want != "" && !strings.Contains(out, c.want) {
					t.Errorf("%s does not show %q:\n%s", cmd, c.want, out)
				}
				if c.absent != "" && strings.Contains(out, c.absent) {
					t.Errorf("%s shows the forged %q:\n%s", cmd, c.absent, out)
				}
			}
			if c.forge && !strings.Contains(loginErr, "the ID token was not used to name you") {
				t.Errorf("login does not say the ID token was refused:\n%s", loginErr)
			}
		})
	}
}
