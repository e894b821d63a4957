package interop

import (
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
		"DPoP":        func(t *testing.T) outcome { return dpopBearerOnly(t, newCLI(t, bin), rs.MCPURL) },
		"device":      func(t *testing.T) outcome { return deviceLogin(t, newCLI(t, bin), rs.MCPURL) },
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
