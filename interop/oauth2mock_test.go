package interop

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// oauth2-mock-server: OpenID Connect discovery only, no dynamic
// registration (the CLI needs --client-id), no consent page, refresh
// tokens that do not rotate, no device flow, no DPoP.
func labOAuth2Mock(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/oauth2-mock-server", "oauth2-mock-server", "oauth2-mock-server")
	asLn, rsLn := loopback(t), loopback(t)
	issuer := urlOf(asLn)
	rs := startResourceServer(t, rsLn, resourceConfig{Issuer: issuer, JWKSURL: issuer + "/jwks", Audience: urlOf(rsLn) + "/mcp", Scopes: []string{"mcp"}})
	as := startNode(t, "oauth2-mock-server", dir, []string{"as.mjs"}, []string{"AS_ISSUER=" + issuer, "ACCESS_TTL=30"},
		asLn, issuer+"/.well-known/openid-configuration")
	r := g.row("oauth2-mock-server", version)
	c := newCLI(t, bin)
	const clientID = "interop-preregistered"
	c.loginArgs = []string{"--client-id", clientID}
	serverFlowsWith(t, g, r, c, rs.MCPURL, issuer, as, map[string]func(t *testing.T) outcome{
		"login": func(t *testing.T) outcome {
			// Without --client-id the CLI says what to do.
			fresh := newCLI(t, bin)
			code, _, stderr := fresh.run("login", rs.MCPURL, "--timeout", "30s")
			if code == 0 || !strings.Contains(stderr, "--client-id") {
				t.Fatalf("login without a client id at an AS without registration: exit %d\n%s", code, stderr)
			}
			_, stderr = c.must("login", rs.MCPURL, "--timeout", "60s", "--client-id", clientID)
			if !strings.Contains(stderr, "Logged in to "+rs.MCPURL) {
				t.Fatalf("login said:\n%s", stderr)
			}
			return pass("no `registration_endpoint` and only OpenID Connect discovery (`/.well-known/openid-configuration`, no RFC 8414 document): `--client-id` with a pre-registered client; without it login stops and names the flag")
		},
		"device": func(t *testing.T) outcome {
			code, _, stderr := c.run("device", rs.MCPURL, "--client-id", clientID)
			if code == 0 {
				t.Fatalf("device against an AS without a device endpoint succeeded:\n%s", stderr)
			}
			return na("no `device_authorization_endpoint`; `mcpauth device` says so")
		},
		"machine": func(t *testing.T) outcome {
			m := newCLI(t, bin)
			m.must("login", rs.MCPURL, "--client-credentials", "--client-id", "interop-machine", "--client-secret", "any-secret-the-mock-ignores")
			if status := initializeStatus(t, rs.MCPURL, m.token(rs.MCPURL)); status != 200 {
				t.Fatalf("the MCP server answered %d to the client credentials token", status)
			}
			return pass("")
		},
		"DPoP": func(t *testing.T) outcome { return na("the AS does not advertise DPoP") },
		"refresh": func(t *testing.T) outcome {
			concurrentRefresh(t, c, rs.MCPURL, as)
			return pass("`grant_types_supported` omits `refresh_token` though the token response carries one (RFC 8414 §2: the list is what the AS supports); the CLI refreshes with it anyway. Refresh tokens do not rotate")
		},
	})
}
