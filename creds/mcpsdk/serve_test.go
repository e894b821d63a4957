package mcpsdk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// A go-sdk client against `mcpauth serve` (the reference server, in
// process on loopback): the first request finds no login and logs in
// through Options.Login; a second session uses the stored login; after
// the server's clock passes the token's expiry, the server's 401 is met
// with a refresh, not a browser.
func TestReferenceServer(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newClient(t, flows.RealClock{}, env.Browser("alice").Approve)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mcpURL := env.URL + "/mcp"

	session := func() {
		t.Helper()
		cs, err := c.connect(ctx, mcpURL, c.options())
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		if out := callTool(t, ctx, cs, "whoami", nil); !strings.Contains(out, "alice") {
			t.Fatalf("whoami does not name alice: %q", out)
		}
	}
	session()
	if n := c.logins.Load(); n != 1 {
		t.Fatalf("%d logins for the first session, want 1", n)
	}
	first := c.stored(mcpURL)
	session()
	if n := c.logins.Load(); n != 1 || c.stored(mcpURL) != first {
		t.Fatalf("the second session logged in again (%d logins) or changed the token", n)
	}

	env.Clock.Advance(25 * time.Hour) // the token is expired at the server only
	session()
	if n := c.logins.Load(); n != 1 {
		t.Fatalf("%d logins after the token expired at the server, want a refresh and no login", n)
	}
	if c.stored(mcpURL) == first {
		t.Fatal("the server took the expired token, or the refreshed one was not stored")
	}
}
