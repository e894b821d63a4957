package flows_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// approve stands in for the user's browser: the test server's
// /authorize approves at once and redirects to AuthCode's loopback
// listener.
func approve(authURL string) error {
	resp, err := http.Get(authURL)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Find where an MCP server's logins happen: its protected resource
// metadata, then its authorization server's.
func ExampleDiscover() {
	srv := flowstest.Start()
	defer srv.Close()

	disc, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("resource:", strings.TrimPrefix(disc.Resource, srv.URL))
	fmt.Println("issuer is the server:", disc.Issuer == srv.URL)
	fmt.Println("scope:", disc.Scope) // offline_access: the server lists it
	// Output:
	// resource: /mcp
	// issuer is the server: true
	// scope: mcp offline_access
}

// Log in to an MCP server with the authorization code flow: discover,
// pick a client (here a new dynamic registration), and let the user
// approve in a browser. OpenBrowser receives the URL to open.
func ExampleAuthCode() {
	srv := flowstest.Start()
	defer srv.Close()
	ctx := context.Background()

	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, srv.URL+"/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := flows.ResolveClient(ctx, flows.ClientConfig{ClientName: "example"}, disc)
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: disc, Client: client, OpenBrowser: approve})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("client:", client.Source)
	fmt.Println("token type:", tok.TokenType)
	fmt.Println("scope:", tok.Scope)
	fmt.Println("refresh token:", tok.RefreshToken != "")
	// Output:
	// client: registered
	// token type: Bearer
	// scope: mcp offline_access
	// refresh token: true
}

// Redeem a refresh token for a new access token, as the client it was
// issued to, at the token endpoint the login found.
func ExampleRefresh() {
	srv := flowstest.Start()
	defer srv.Close()
	ctx := context.Background()

	disc, _ := flows.Discover(ctx, flows.DiscoverConfig{}, srv.URL+"/mcp")
	client, _ := flows.ResolveClient(ctx, flows.ClientConfig{}, disc)
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: disc, Client: client, OpenBrowser: approve})
	if err != nil {
		fmt.Println(err)
		return
	}
	next, err := flows.Refresh(ctx, flows.RefreshConfig{TokenURL: disc.AuthServer.TokenEndpoint, Client: client, Resource: disc.Resource}, tok.RefreshToken)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("new access token:", next.AccessToken != tok.AccessToken)
	// The server rotates refresh tokens: the spent one is refused.
	_, err = flows.Refresh(ctx, flows.RefreshConfig{TokenURL: disc.AuthServer.TokenEndpoint, Client: client, Resource: disc.Resource}, tok.RefreshToken)
	fmt.Println("spent one refused:", errors.Is(err, flows.ErrRefreshRefused))
	// Output:
	// new access token: true
	// spent one refused: true
}

// Keep a credential on its server's origin: a confined client sends
// nothing to another origin and follows no redirect there.
func ExampleConfine() {
	srv := flowstest.Start()
	defer srv.Close()
	other := flowstest.Start()
	defer other.Close()

	hc, err := flows.ConfineTo(nil, srv.URL+"/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = hc.Get(other.URL + "/api/ping")
	fmt.Println("another origin refused:", errors.Is(err, flows.ErrCrossOrigin))
	fmt.Println("requests it received:", len(other.Requests()))
	// Output:
	// another origin refused: true
	// requests it received: 0
}
