package mcpsdk_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/creds/mcpsdk"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// echoServer is a go-sdk MCP server with one tool, echo.
func echoServer() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "says it back"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// fakeServer is flowstest's authorization server and token check in
// front of echoServer, with a browser that approves at once.
func fakeServer(t *testing.T) (*flowstest.Server, *client) {
	srv := flowstest.NewServer(t)
	srv.MCPHandler = echoServer()
	srv.PRMScopes = []string{"mcp", flows.ScopeOfflineAccess}
	c := newClient(t, flows.RealClock{}, func(ctx context.Context, authURL string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req) // /authorize redirects to the callback at once
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	return srv, c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A 403 insufficient_scope logs in again for the granted scope plus the
// one asked for, through Options.StepUp; a server that never grants it
// gets at most MaxStepUps logins.
func TestStepUp(t *testing.T) {
	srv, c := fakeServer(t)
	ctx := testContext(t)
	srv.Required = []string{"files:read"}
	cs, err := c.connect(ctx, srv.URL+"/mcp", c.options())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if out := callTool(t, ctx, cs, "echo", map[string]any{"text": "hi"}); out != "hi" {
		t.Fatalf("echo said %q", out)
	}
	if n := c.logins.Load(); n != 2 || !strings.Contains(c.scopes[1], "files:read") || !strings.Contains(c.scopes[1], "mcp") {
		t.Fatalf("%d logins for scopes %q; want a login and a step-up to mcp and files:read", n, c.scopes)
	}

	srv2, c2 := fakeServer(t)
	srv2.Required, srv2.Grantable = []string{"files:read"}, []string{"mcp", flows.ScopeOfflineAccess}
	opts := c2.options()
	opts.MaxStepUps = 2
	h, err := mcpsdk.NewOAuthHandler(c2.keeper, srv2.URL+"/mcp", opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // one handler, as a long-running client keeps it
		cl := mcp.NewClient(&mcp.Implementation{Name: "mcpsdk-test", Version: "1"}, nil)
		if _, err = cl.Connect(ctx, h.Transport(nil), nil); err == nil {
			t.Fatal("connected to a server that never grants the scope it requires")
		}
	}
	var se *flows.StepUpError
	if !errors.As(err, &se) || se.Refused != "files:read" {
		t.Fatalf("last connect: %v; want a *flows.StepUpError", err)
	}
	if n := c2.logins.Load(); n != 3 {
		t.Fatalf("%d logins; want one login and two step-ups (MaxStepUps)", n)
	}
}

// Without Options.Login, a missing login is an error that names the
// server and matches creds.ErrAuthRequired; nothing is sent with a token.
func TestNoLogin(t *testing.T) {
	srv, c := fakeServer(t)
	_, err := c.connect(testContext(t), srv.URL+"/mcp", mcpsdk.Options{})
	var le *creds.LoginError
	if !errors.As(err, &le) || le.Server != srv.URL+"/mcp" || !errors.Is(err, creds.ErrAuthRequired) {
		t.Fatalf("connect without a login: %v", err)
	}
	if c.logins.Load() != 0 {
		t.Fatal("logged in without Options.Login")
	}
}

// A DPoP-bound login is refused before anything is sent: the SDK would
// send it as a Bearer token, without the proof the server requires.
func TestDPoPBoundRefused(t *testing.T) {
	srv, c := fakeServer(t)
	srv.DPoP = true
	ctx := testContext(t)
	st, err := c.store()
	if err != nil {
		t.Fatal(err)
	}
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	key, err := c.keeper.LoginKey(st, disc, true, false)
	if err != nil {
		t.Fatal(err)
	}
	client := flows.Client{ID: "cli", AuthMethod: flows.AuthMethodNone}
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: disc, Client: client, DPoP: key, OpenBrowser: func(u string) error { return c.approve(ctx, u) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := creds.SaveLogin(st, "", disc, client, tok, key, creds.User{}); err != nil {
		t.Fatal(err)
	}
	before := srv.Count("/mcp", "")
	_, err = c.connect(ctx, srv.URL+"/mcp", c.options())
	if !errors.Is(err, mcpsdk.ErrDPoPBound) {
		t.Fatalf("connect with a DPoP-bound login: %v; want ErrDPoPBound", err)
	}
	if n := srv.Count("/mcp", "") - before; n != 0 || c.logins.Load() != 0 {
		t.Fatalf("%d requests reached /mcp and %d logins ran; want none", n, c.logins.Load())
	}
}

// The token stays on its server's origin: a redirect to another loopback
// port (which Go's client would follow with the Authorization header,
// the host being the same) is not followed.
func TestRedirectNotFollowed(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	srv, c := fakeServer(t)
	srv.MCPHandler = http.RedirectHandler(other.URL+"/mcp", http.StatusTemporaryRedirect)
	_, err := c.connect(testContext(t), srv.URL+"/mcp", c.options())
	if !errors.Is(err, flows.ErrCrossOrigin) {
		t.Fatalf("connect through a cross-origin redirect: %v; want ErrCrossOrigin", err)
	}
	if leaked.Load() != 0 {
		t.Fatal("the token went to another origin")
	}
}

// NewOAuthHandler takes an absolute http(s) MCP URL only: its origin is
// where tokens may go.
func TestNewOAuthHandlerChecks(t *testing.T) {
	_, c := fakeServer(t)
	for _, u := range []string{"", "/mcp", "ftp://127.0.0.1/mcp", "127.0.0.1:8080/mcp"} {
		if _, err := mcpsdk.NewOAuthHandler(c.keeper, u, mcpsdk.Options{}); err == nil {
			t.Errorf("NewOAuthHandler(%q) took it", u)
		}
	}
	if _, err := mcpsdk.NewOAuthHandler(nil, "http://127.0.0.1:1/mcp", mcpsdk.Options{}); err == nil {
		t.Error("NewOAuthHandler took a nil Keeper")
	}
}
