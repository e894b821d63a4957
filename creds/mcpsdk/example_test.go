package mcpsdk_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/creds/mcpsdk"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/keyring"
)

// A go-sdk client with mcpauth's logins: the first request finds none,
// so Options.Login runs a browser login and stores it; every later
// session, in this program or another, uses the stored one, refreshed as
// needed.
func ExampleNewOAuthHandler() {
	srv := flowstest.Start() // an MCP server with its own authorization server
	defer srv.Close()
	srv.MCPHandler = echoServer()
	dir, _ := os.MkdirTemp("", "mcpsdk-example")
	defer os.RemoveAll(dir)
	// A program sharing the CLI's logins opens keyring.Config{} instead.
	storage := keyring.Config{Dir: dir, Storage: keyring.StorageFile}
	open := func() (creds.Store, error) { return keyring.Open(storage) }
	k := &creds.Keeper{Open: open, Clock: flows.RealClock{}, Warn: func(string, ...any) {},
		HTTPClient: func() (*http.Client, error) { return &http.Client{Timeout: 30 * time.Second}, nil }}

	login := func(ctx context.Context, server string) error {
		disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, server)
		if err != nil {
			return err
		}
		st, err := keyring.Open(storage)
		if err != nil {
			return err
		}
		client, err := flows.ResolveClient(ctx, flows.ClientConfig{Cache: creds.RegistrationCache{Store: st}}, disc)
		if err != nil {
			return err
		}
		tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: disc, Client: client,
			OpenBrowser: func(u string) error { // a real program opens u in the user's browser
				resp, err := http.Get(u)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}})
		if err != nil {
			return err
		}
		fmt.Println("logged in")
		return creds.SaveLogin(st, "", disc, client, tok, nil, creds.User{})
	}

	ctx := context.Background()
	h, err := mcpsdk.NewOAuthHandler(k, srv.URL+"/mcp", mcpsdk.Options{Login: login})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, h.Transport(nil), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
		cs.Close()
	}
	// Output:
	// logged in
	// hello
	// hello
}
