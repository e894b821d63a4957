package interop

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// node-oidc-provider (panva): dynamic registration, the device flow,
// client credentials, RFC 8707 resource indicators with JWT access tokens
// for the MCP resource, and refresh tokens that rotate on every use by a
// public client (reusing a rotated one revokes the whole grant).
func labOIDCProvider(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/oidc-provider", "oidc-provider", "node-oidc-provider")
	asLn, rsLn := loopback(t), loopback(t)
	issuer := urlOf(asLn)
	const ccID, ccSecret = "interop-machine", "interop-machine-secret-0123456789"
	rs := startResourceServer(t, rsLn, resourceConfig{Issuer: issuer, JWKSURL: issuer + "/jwks", Audience: urlOf(rsLn) + "/mcp", Scopes: []string{"mcp"}})
	as := startNode(t, "node-oidc-provider", dir, []string{"as.mjs"}, []string{
		"AS_ISSUER=" + issuer, "MCP_RESOURCE=" + rs.MCPURL, accessTTLEnv,
		"CC_CLIENT_ID=" + ccID, "CC_CLIENT_SECRET=" + ccSecret,
	}, asLn, issuer+"/.well-known/openid-configuration")
	r := g.row("node-oidc-provider", version)
	c := newCLI(t, bin)
	serverFlowsWith(t, g, r, c, rs.MCPURL, issuer, as, map[string]func(t *testing.T) outcome{
		"conformance": func(t *testing.T) outcome { return oidcConformance(t, newCLI(t, bin), rs.MCPURL) },
		// node-oidc-provider 9 advertises DPoP; the lab's MCP server (the
		// go-sdk's RequireBearerToken) takes only the Bearer scheme and
		// offers no DPoP challenge: a login with no flag must use Bearer.
		"DPoP": func(t *testing.T) outcome {
			d := newCLI(t, bin)
			d.must("login", rs.MCPURL, "--timeout", "60s")
			if code, out, stderr := d.run("ping", rs.MCPURL); code != 0 {
				t.Fatalf("ping after a login with no flag: exit %d\n%s%s", code, out, stderr)
			}
			if code, out, _ := d.run("token", "--header", rs.MCPURL); code != 0 || !strings.HasPrefix(out, "Authorization: Bearer ") {
				t.Fatalf("token --header: exit %d %q", code, out)
			}
			return pass("the AS advertises DPoP (`dpop_signing_alg_values_supported`, on by default) and the MCP server takes only Bearer (no `DPoP` challenge, RFC 9449 §7.1): login, ping, proxy and token use Bearer with no flag, as the resource decides")
		},
		"device": func(t *testing.T) outcome {
			d := newCLI(t, bin)
			d.device(rs.MCPURL)
			if status := initializeStatus(t, rs.MCPURL, d.token(rs.MCPURL)); status != 200 {
				t.Fatalf("the MCP server answered %d to the device login's token", status)
			}
			return pass("")
		},
		"machine": func(t *testing.T) outcome {
			m := newCLI(t, bin)
			m.must("login", rs.MCPURL, "--client-credentials", "--client-id", ccID, "--client-secret", ccSecret)
			if status := initializeStatus(t, rs.MCPURL, m.token(rs.MCPURL)); status != 200 {
				t.Fatalf("the MCP server answered %d to the client credentials token", status)
			}
			return pass("client credentials with client_secret_basic, pre-registered client")
		},
	})
}
