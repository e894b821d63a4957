package proxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

const hostInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}` + "\n"

// A DPoP-bound token stored earlier (--dpop), from a public client, before
// an MCP server that takes only Bearer: no refresh can give a Bearer token
// (the refresh token is bound, RFC 9449 §5), so none is spent, and the
// host's error, like ping's, names a plain login, which uses Bearer there.
func TestProxyNamesALoginForABoundTokenABearerOnlyResourceRefuses(t *testing.T) {
	s, c, mcp := boundLoginBeforeBearerOnly(t)
	c.Stdin = hostInitialize
	_, stdout, stderr := c.Run("proxy", mcp)
	want := "takes only Bearer tokens, and the stored one is DPoP-bound; run: mcpauth login " + mcp + " (a new login uses Bearer there)"
	if !strings.Contains(stdout, `"id":1`) || !strings.Contains(stdout, want) {
		t.Fatalf("the host's answer lacks the login that fixes it:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("the proxy's log lacks it:\n%s", stderr)
	}
	if n := s.Count("/oauth/token", "refresh_token"); n != 0 || strings.Contains(stderr, "renewed it") {
		t.Errorf("%d refreshes for a bound refresh token:\n%s", n, stderr)
	}
}

// With --login the proxy logs in again itself: the new login gets a Bearer
// token, and the host's request goes through with no flag to learn.
func TestProxyLogsInAgainForBearerWhereTheResourceTakesOnlyBearer(t *testing.T) {
	_, c, mcp := boundLoginBeforeBearerOnly(t)
	c.Stdin = hostInitialize
	_, stdout, stderr := c.Run("proxy", mcp, "--login")
	if !strings.Contains(stdout, `"id":1`) || strings.Contains(stdout, `"error"`) {
		t.Fatalf("the host's initialize did not go through:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	if !strings.Contains(stderr, "takes only Bearer tokens and the stored one is DPoP-bound: logging in again") {
		t.Errorf("the proxy's log does not say why it logged in again:\n%s", stderr)
	}
	if code, out, _ := c.Run("token", "--header"); code != 0 || !strings.HasPrefix(out, "Authorization: Bearer ") {
		t.Errorf("the stored login after the proxy's: exit %d %q", code, out)
	}
}

// mcpHandler is a go-sdk MCP server with no tools, behind flowstest's token check.
func mcpHandler() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "bearer-only", Version: "1"}, nil)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// boundLoginBeforeBearerOnly stores a DPoP-bound login (--dpop) for an MCP
// server that takes only Bearer, behind an authorization server that
// offers DPoP.
func boundLoginBeforeBearerOnly(t *testing.T) (*flowstest.Server, *clitest.CLI, string) {
	t.Helper()
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly = true, true
	s.MCPHandler = mcpHandler()
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	mcp := s.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp, "--dpop"); code != 0 {
		t.Fatal(stderr)
	}
	return s, c, mcp
}
