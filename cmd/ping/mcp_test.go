package ping_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

func mcpServer() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake-mcp", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// A server without /api/ping: ping checks the token with MCP tools/list,
// says so, and still refreshes once on a 401 invalid_token.
func TestPingFallsBackToMCPToolsList(t *testing.T) {
	s := flowstest.NewServer(t)
	s.NoPing = true
	s.MCPHandler = mcpServer()
	s.TokenSubject = "acc-user"
	clk := flowstest.NewFakeClock(time.Now())
	s.Clock = clk
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := c.Run("ping")
	if code != 0 || strings.TrimSpace(stdout) != s.URL+"/mcp" || !strings.Contains(stderr, "MCP tools/list") || !strings.Contains(stderr, "1 tool(s) for acc-user") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
	clk.Advance(2 * time.Hour) // the server's clock: the token is past its hour
	code, stdout, stderr = c.Run("ping", "-o", "json")
	var out map[string]any
	_ = json.Unmarshal([]byte(stdout), &out)
	if code != 0 || out["check"] != "mcp tools/list" || out["server_name"] != "fake-mcp" {
		t.Fatalf("after expiry: exit %d stdout %q: %s", code, stdout, stderr)
	}
	if n := s.Count("/oauth/token", "refresh_token"); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

// A server that answers the token with a 500 (the MCP TypeScript SDK's
// example does for a token it does not know): one readable line naming the
// login that fixes it, exit 3, not a nested error chain with exit 1.
func TestPingServerErrorOnTheToken(t *testing.T) {
	s := flowstest.NewServer(t)
	s.NoPing = true
	s.MCPHandler = mcpServer()
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	s.MCPHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":"server_error","error_description":"Internal Server Error"}`))
	})
	code, _, stderr := c.Run("ping")
	if code != clierr.ExitAuthRequired || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "answered HTTP 500 to the stored token") || !strings.Contains(stderr, "run: mcpauth login "+s.URL+"/mcp") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// An authorization server that binds tokens with DPoP in front of a
// resource that takes only Bearer (the interop lab met node-oidc-provider
// with a go-sdk server): ping says so and names --no-dpop, exit 3.
func TestPingNamesNoDPoPForABearerOnlyResource(t *testing.T) {
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly = true, true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := c.Run("ping")
	if code != clierr.ExitAuthRequired || !strings.Contains(stderr, "takes only Bearer tokens") || !strings.Contains(stderr, "run: mcpauth login "+s.URL+"/mcp --no-dpop") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
