package cmdutil

import (
	"testing"

	"github.com/mcpauth/mcpauth/keyring"
)

// The access token goes to the MCP server's origin only: /api/ping is looked
// up under the resource, never under the authorization server's issuer,
// whatever the resource's path.
func TestPingBaseNeverTheIssuer(t *testing.T) {
	issuer := "https://auth.example.com"
	for _, c := range []struct{ resource, server, want string }{
		{"https://mcp.example.com/mcp", "", "https://mcp.example.com"},
		{"https://mcp.example.com/v1/rpc", "", "https://mcp.example.com"},
		{"https://mcp.example.com:8443/tools/sse", "", "https://mcp.example.com:8443"},
		{"", "http://127.0.0.1:3000/rpc", "http://127.0.0.1:3000"},
		{"", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080"},
	} {
		got := PingBase(keyring.TokenBundle{Resource: c.resource, Issuer: issuer}, c.server)
		if got != c.want {
			t.Errorf("PingBase(resource %q, server %q) = %q, want %q", c.resource, c.server, got, c.want)
		}
	}
}

func TestCredentialOrigin(t *testing.T) {
	if _, err := CredentialOrigin("http://mcp.example.com/mcp", false); CodeFor(err) != ExitUsage {
		t.Errorf("plain http off loopback: %v", err)
	}
	for _, ok := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://[::1]:1/mcp", "http://localhost/mcp"} {
		if _, err := CredentialOrigin(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if o, err := CredentialOrigin("http://mcp.example.com/mcp", true); err != nil || o.String() != "http://mcp.example.com" {
		t.Errorf("with the override: %v %v", o, err)
	}
}
