package creds_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/keyring"
)

// logIn logs in to mcpURL with the authorization code flow and stores
// the result in st, as `mcpauth login` does; the test server approves at
// once, so the "browser" only follows the URL.
func logIn(ctx context.Context, st creds.Store, mcpURL string) error {
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, mcpURL)
	if err != nil {
		return err
	}
	client, err := flows.ResolveClient(ctx, flows.ClientConfig{}, disc)
	if err != nil {
		return err
	}
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: disc, Client: client, OpenBrowser: func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}})
	if err != nil {
		return err
	}
	return creds.SaveLogin(st, "", disc, client, tok, nil, creds.User{})
}

// keeperIn is a Keeper on a file token store in dir. A program that
// shares the CLI's logins opens keyring.Config{} (the OS keyring and
// the CLI's directory) instead.
// pingStatus is the status the test server's /api/ping answers c with,
// sent through a flows.Transport as any request to the server would be.
func pingStatus(ctx context.Context, c creds.Credential) int {
	o, err := flows.OriginOf(c.BaseURL)
	if err != nil {
		return 0
	}
	hc := (&flows.Transport{Origin: o, Source: flows.StaticSource(c.Present())}).Client(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/api/ping", nil)
	if err != nil {
		return 0
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func keeperIn(dir string, clock flows.Clock) *creds.Keeper {
	return &creds.Keeper{
		Open: func() (creds.Store, error) {
			return keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageFile})
		},
		HTTPClient: func() (*http.Client, error) { return &http.Client{Timeout: 30 * time.Second}, nil },
		Clock:      clock,
		Warn:       func(string, ...any) {},
	}
}

// Log in once, then get the credential for the server from any program:
// Fresh refreshes it first when it is about to expire.
func ExampleKeeper_Fresh() {
	srv := flowstest.Start()
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "creds-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	k := keeperIn(dir, flows.RealClock{})

	st, err := k.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := logIn(ctx, st, srv.URL+"/mcp"); err != nil {
		fmt.Println(err)
		return
	}
	c, err := k.Fresh(ctx, srv.URL+"/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("server:", strings.TrimPrefix(c.Server, srv.URL))
	fmt.Println("kind:", c.Kind)
	fmt.Println("scope:", c.Scope)
	fmt.Println("DPoP-bound:", c.DPoP != nil)
	// Output:
	// server: /mcp
	// kind: oauth
	// scope: mcp offline_access
	// DPoP-bound: false
}

// When the server refuses a token (a 401 invalid_token: here its clock
// has passed the token's expiry), Retry refreshes it once, under the
// entry's cross-process lock, and stores the result.
func ExampleKeeper_Retry() {
	srv := flowstest.Start()
	defer srv.Close()
	serverClock := flowstest.NewFakeClock(time.Now())
	srv.Clock = serverClock
	dir, _ := os.MkdirTemp("", "creds-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	k := keeperIn(dir, flows.RealClock{})
	st, _ := k.Open()
	if err := logIn(ctx, st, srv.URL+"/mcp"); err != nil {
		fmt.Println(err)
		return
	}
	c, _ := k.Fresh(ctx, srv.URL+"/mcp")

	serverClock.Advance(2 * time.Hour)
	fmt.Println("refused:", pingStatus(ctx, c) == http.StatusUnauthorized)
	n, ok, err := k.Retry(ctx, c)
	fmt.Println("refreshed:", ok, err == nil, n.Token != c.Token)
	fmt.Println("accepted:", pingStatus(ctx, n) == http.StatusOK)
	// Output:
	// refused: true
	// refreshed: true true true
	// accepted: true
}

// A failure only a login fixes is a *LoginError naming the server: the
// program decides how to log in (the CLI says "run: mcpauth login").
func ExampleLoginError() {
	dir, _ := os.MkdirTemp("", "creds-example")
	defer os.RemoveAll(dir)
	k := keeperIn(dir, flows.RealClock{})

	_, err := k.Fresh(context.Background(), "https://mcp.example.com/mcp")
	var le *creds.LoginError
	if errors.As(err, &le) {
		fmt.Println("log in to:", le.Server)
	}
	fmt.Println(err)
	fmt.Println("auth required:", errors.Is(err, creds.ErrAuthRequired))
	// Output:
	// log in to: https://mcp.example.com/mcp
	// no stored credential for https://mcp.example.com/mcp
	// auth required: true
}
