package mcpsdk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// A go-sdk client against a server nobody here wrote: the MCP TypeScript
// SDK's example server with its demo OAuth provider. It skips without
// node and the installed SDK (tsserver.InstallCommand).
func TestTypeScriptServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	srv := tsserver.Start(t)
	c := newClient(t, flows.RealClock{}, func(_ context.Context, authURL string) error {
		_, err := tsserver.Approve(authURL, 30*time.Second)
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range 2 {
		cs, err := c.connect(ctx, srv.MCPURL, c.options())
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		out := callTool(t, ctx, cs, "greet", map[string]any{"name": "mcpauth"})
		cs.Close()
		if !strings.Contains(out, "mcpauth") {
			t.Fatalf("greet said %q", out)
		}
	}
	if n := c.logins.Load(); n != 1 {
		t.Fatalf("%d logins for two sessions, want 1", n)
	}
}
