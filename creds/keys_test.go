package creds

import "testing"

// The access token goes to the MCP server's origin only: /api/ping is looked
// up under the resource, never under the authorization server's issuer,
// whatever the resource's path.
func TestPingBaseNeverTheIssuer(t *testing.T) {
	for _, c := range []struct{ resource, server, want string }{
		{"https://mcp.example.com/mcp", "", "https://mcp.example.com"},
		{"https://mcp.example.com/v1/rpc", "", "https://mcp.example.com"},
		{"https://mcp.example.com:8443/tools/sse", "", "https://mcp.example.com:8443"},
		{"", "http://127.0.0.1:3000/rpc", "http://127.0.0.1:3000"},
		{"", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080"},
	} {
		got := PingBase(c.resource, c.server)
		if got != c.want {
			t.Errorf("PingBase(resource %q, server %q) = %q, want %q", c.resource, c.server, got, c.want)
		}
	}
}
