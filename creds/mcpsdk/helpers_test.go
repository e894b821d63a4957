package mcpsdk_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/creds/mcpsdk"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// client is one program's view of a machine's logins: a real file token
// store in a temporary directory, a Keeper on it, and a browser login
// that a test's approve stands in for.
type client struct {
	t       *testing.T
	dir     string
	keeper  *creds.Keeper
	approve func(ctx context.Context, authURL string) error
	logins  atomic.Int64
	scopes  []string // the scope each login asked for
}

func newClient(t *testing.T, clk flows.Clock, approve func(ctx context.Context, authURL string) error) *client {
	c := &client{t: t, dir: t.TempDir(), approve: approve}
	c.keeper = &creds.Keeper{
		Open:       func() (creds.Store, error) { return c.store() },
		HTTPClient: func() (*http.Client, error) { return &http.Client{Timeout: 10 * time.Second}, nil },
		Clock:      clk,
		Warn:       func(format string, args ...any) { t.Logf("warning: "+format, args...) },
	}
	return c
}

func (c *client) store() (*keyring.Store, error) {
	return keyring.Open(keyring.Config{Dir: c.dir, Storage: keyring.StorageFile})
}

// login is the Options.Login and Options.StepUp a program supplies: a
// browser login with flows, stored with creds.
func (c *client) login(ctx context.Context, server, scope string) error {
	c.logins.Add(1)
	c.scopes = append(c.scopes, scope)
	st, err := c.store()
	if err != nil {
		return err
	}
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, server)
	if err != nil {
		return err
	}
	client, err := flows.ResolveClient(ctx, flows.ClientConfig{Cache: creds.RegistrationCache{Store: st}}, disc)
	if err != nil {
		return err
	}
	scope = flows.WithOfflineAccess(cmpOr(scope, disc.Scope), disc.AuthServer)
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Clock: c.keeper.Clock, Discovery: disc, Client: client, Scope: scope,
		OpenBrowser: func(u string) error { return c.approve(ctx, u) }})
	if err != nil {
		return err
	}
	return creds.SaveLogin(st, "", disc, client, tok, nil, creds.User{})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// options logs in and steps up with c.login.
func (c *client) options() mcpsdk.Options {
	return mcpsdk.Options{
		Login:  func(ctx context.Context, server string) error { return c.login(ctx, server, "") },
		StepUp: c.login,
	}
}

// connect opens a go-sdk client session to mcpURL through the adapter.
func (c *client) connect(ctx context.Context, mcpURL string, opts mcpsdk.Options) (*mcp.ClientSession, error) {
	h, err := mcpsdk.NewOAuthHandler(c.keeper, mcpURL, opts)
	if err != nil {
		return nil, err
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "mcpsdk-test", Version: "1"}, nil)
	return cl.Connect(ctx, h.Transport(nil), nil)
}

// stored is the access token stored for server.
func (c *client) stored(server string) string {
	c.t.Helper()
	st, err := c.store()
	if err != nil {
		c.t.Fatal(err)
	}
	e, err := creds.Resolve(st, server, "")
	if err != nil {
		c.t.Fatal(err)
	}
	b, err := creds.Load(st, e.Server, e.Account)
	if err != nil {
		c.t.Fatal(err)
	}
	return b.AccessToken
}

// callTool lists the tools, checks want is among them and calls it; it
// returns the text the tool answered.
func callTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, want string, args map[string]any) string {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
		t.Fatalf("tools/list has no %s: %v", want, names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: want, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("tools/call %s: %v %+v", want, err, res)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n")
}
