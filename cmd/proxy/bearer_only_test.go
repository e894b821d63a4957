package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// An authorization server that binds tokens with DPoP in front of an MCP
// server that takes only Bearer: the host's error, like ping's, names the
// login that fixes it (--no-dpop), not a bare "log in again" that would
// bind the next token the same way, and no refresh is spent on it.
func TestProxyNamesNoDPoPForABearerOnlyResource(t *testing.T) {
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly = true, true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	mcp := s.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp); code != 0 {
		t.Fatal(stderr)
	}
	c.Stdin = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}` + "\n"
	_, stdout, stderr := c.Run("proxy", mcp)
	want := "takes only Bearer tokens, and the stored one is DPoP-bound (its authorization server offered DPoP); run: mcpauth login " + mcp + " --no-dpop"
	if !strings.Contains(stdout, `"id":1`) || !strings.Contains(stdout, want) {
		t.Fatalf("the host's answer lacks the --no-dpop fix:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("the proxy's log lacks it:\n%s", stderr)
	}
	// A refresh binds the new token to the same key: none is spent on it.
	if n := s.Count("/oauth/token", "refresh_token"); n != 0 || strings.Contains(stderr, "renewed it") {
		t.Errorf("%d refreshes for a resource that refuses every DPoP token:\n%s", n, stderr)
	}
}
