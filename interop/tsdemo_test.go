package interop

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// The MCP TypeScript SDK's example server with its demo OAuth provider
// (internal/tsserver, testdata/mcp-ts-server): dynamic registration,
// consent approved at once, opaque tokens the MCP server checks by
// introspection, no refresh tokens, no device flow, no machine grant.
func labTSDemo(t *testing.T, bin string, g *grid) {
	srv := tsserver.Start(t)
	r := g.row("MCP TypeScript SDK demo provider", srv.SDKVersion)
	c := newCLI(t, bin)
	serverFlowsWith(t, g, r, c, srv.MCPURL, srv.AuthURL, nil, map[string]func(t *testing.T) outcome{
		"token accepted": func(t *testing.T) outcome {
			tok := c.token(srv.MCPURL)
			if status := initializeStatus(t, srv.MCPURL, tok); status != 200 {
				t.Fatalf("the MCP server answered %d to mcpauth token's token", status)
			}
			if status := initializeStatus(t, srv.MCPURL, tok+"x"); status == 200 {
				t.Fatalf("the MCP server accepted a forged token")
			}
			return pass("a token its introspection does not know gets 500 `server_error`, not 401 `invalid_token` (RFC 6750 §3.1): the example's verifier throws a plain Error")
		},
		"proxy": func(t *testing.T) outcome {
			// The example's tools: greet and others, no whoami.
			tools, text := c.proxySession(srv.MCPURL, "greet", map[string]any{"name": "mcpauth"})
			if !strings.Contains(strings.Join(tools, ","), "greet") || !strings.Contains(text, "mcpauth") {
				t.Fatalf("through the proxy: tools %v, greet %q", tools, text)
			}
			return pass("")
		},
		"device": func(t *testing.T) outcome { return na("no `device_authorization_endpoint`") },
		"refresh": func(t *testing.T) outcome {
			return na("the demo provider issues no refresh token (its `exchangeRefreshToken` is not implemented)")
		},
		"machine": func(t *testing.T) outcome { return na("no client credentials grant") },
		"DPoP":    func(t *testing.T) outcome { return na("the AS does not advertise DPoP") },
	})
}
