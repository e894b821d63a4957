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

// An authorization server that offers DPoP in front of a resource that
// takes only Bearer (the interop lab met node-oidc-provider before a go-sdk
// server): the resource decides, so a plain login gets a Bearer token, and
// ping and token work with no flag.
func TestBearerWhereTheResourceTakesOnlyBearer(t *testing.T) {
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly = true, true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	for _, r := range s.Requests() {
		if r.Header.Get("DPoP") != "" {
			t.Errorf("a DPoP proof went to %s: the resource never offered DPoP", r.Path)
		}
	}
	if code, _, stderr := c.Run("ping"); code != 0 {
		t.Fatalf("ping: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := c.Run("token", "--header"); code != 0 || !strings.HasPrefix(stdout, "Authorization: Bearer ") {
		t.Fatalf("token --header: exit %d %q", code, stdout)
	}
}

// A DPoP-bound token stored earlier (--dpop) that a Bearer-only resource
// refuses, from a public client, whose refresh token is bound to the key
// (RFC 9449 §5): no refresh can give a Bearer token, so ping names a plain
// login (no flag to learn), spends no refresh, and that login gets Bearer.
func TestPingNamesALoginForABoundTokenABearerOnlyResourceRefuses(t *testing.T) {
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly = true, true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp", "--dpop"); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := c.Run("ping")
	if code != clierr.ExitAuthRequired || !strings.Contains(stderr, "takes only Bearer tokens") ||
		!strings.Contains(stderr, "run: mcpauth login "+s.URL+"/mcp (a new login uses Bearer there)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := s.Count("/oauth/token", "refresh_token"); n != 0 {
		t.Errorf("%d refreshes spent on a bound refresh token", n)
	}
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := c.Run("ping"); code != 0 {
		t.Fatalf("ping after a plain login: exit %d: %s", code, stderr)
	}
}

// The same with a confidential client, whose refresh token is not bound:
// ping renews the refused DPoP-bound token as a Bearer one, with a refresh
// that carries no proof, and no login.
func TestPingRenewsABoundTokenAsBearerWhereTheRefreshAllows(t *testing.T) {
	s := flowstest.NewServer(t)
	s.DPoP, s.ResourceBearerOnly, s.Confidential = true, true, true
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp", "--dpop"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := c.Run("ping"); code != 0 {
		t.Fatalf("ping: exit %d: %s", code, stderr)
	}
	var refreshes int
	for _, r := range s.Requests() {
		if r.Form.Get("grant_type") == "refresh_token" {
			refreshes++
			if r.Header.Get("DPoP") != "" {
				t.Error("the renewal as Bearer sent a DPoP proof")
			}
		}
	}
	if refreshes != 1 || s.Count("/oauth/authorize", "") != 1 {
		t.Errorf("%d refreshes, %d authorizations; want 1 and 1 (no new login)", refreshes, s.Count("/oauth/authorize", ""))
	}
	if code, stdout, _ := c.Run("token", "--header"); code != 0 || !strings.HasPrefix(stdout, "Authorization: Bearer ") {
		t.Fatalf("token --header after the renewal: exit %d %q", code, stdout)
	}
}
