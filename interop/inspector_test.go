package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// The MCP Inspector's CLI mode (`inspector --cli`) against the reference
// server: its own OAuth client registers dynamically, prints the
// authorization URL (MCP_AUTO_OPEN_ENABLED=true lets it run without a
// terminal), receives the code on its loopback callback and stores the
// token under HOME; then tools/list and tools/call whoami. The test is the
// person at the browser.
func labInspector(t *testing.T, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/inspector", "@modelcontextprotocol/inspector", "MCP Inspector")
	srv := newServeEnv(t)
	r := g.row("MCP Inspector CLI", version)
	home := t.TempDir()
	callback := "http://127.0.0.1:" + freePort(t) + "/oauth/callback"
	inspect := func(t *testing.T, args ...string) (out string, authorized bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := nodeCommand(ctx, dir, append([]string{"node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
			"--cli", srv.env.URL + "/mcp", "--callback-url", callback}, args...),
			"HOME="+home, "MCP_STORAGE_DIR="+home, "MCP_INSPECTOR_SECRET_STORE=file", "MCP_AUTO_OPEN_ENABLED=true", "BROWSER=true", "NO_COLOR=1")
		var stdout syncbuf.Buffer
		cmd.Stdout = &stdout
		log, stop := watchLines(&cmd.Stderr, func(line string) {
			if _, u, ok := strings.Cut(line, "Please navigate to: "); ok {
				authorized = true
				if err := approveAt(ctx, srv, strings.TrimSpace(u)); err != nil {
					t.Logf("approving %s failed: %v", u, err)
				}
			}
		})
		err := cmd.Run()
		stop()
		if err != nil {
			t.Fatalf("inspector --cli %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), log.String())
		}
		return stdout.String(), authorized
	}
	g.flow(t, r, "login (registration)", func(t *testing.T) outcome {
		out, authorized := inspect(t, "--method", "tools/list")
		if !authorized || !strings.Contains(out, "whoami") {
			t.Fatalf("authorized %v; tools/list:\n%s", authorized, out)
		}
		return pass("")
	})
	g.flow(t, r, "tools", func(t *testing.T) outcome {
		out, authorized := inspect(t, "--method", "tools/call", "--tool-name", "whoami", "--stored-auth-only")
		if authorized || !strings.Contains(out, "alice") {
			t.Fatalf("authorized again: %v; whoami:\n%s", authorized, out)
		}
		return pass("tools/call whoami with the stored token (`--stored-auth-only`). Where HOME looks ephemeral or containerised the Inspector keeps tokens in memory only, so a second run logs in again; `MCP_INSPECTOR_SECRET_STORE=file` keeps them")
	})
	g.flow(t, r, "refresh", func(t *testing.T) outcome {
		srv.env.Clock.Advance(25 * time.Hour)
		var out string
		var authorized bool
		srv.refreshed(t, func() {
			out, authorized = inspect(t, "--method", "tools/call", "--tool-name", "whoami", "--stored-auth-only")
		})
		if authorized || !strings.Contains(out, "alice") {
			t.Fatalf("after the clock moved: authorized again: %v; whoami:\n%s", authorized, out)
		}
		return pass("")
	})
	g.flow(t, r, "login (metadata document)", func(t *testing.T) outcome {
		doc := srv.metadataDocument(t, callback)
		home = t.TempDir()
		out, authorized := inspect(t, "--method", "tools/list", "--client-metadata-url", doc)
		if !authorized || !strings.Contains(out, "whoami") {
			t.Fatalf("authorized %v; tools/list:\n%s", authorized, out)
		}
		return pass("")
	})
	g.flow(t, r, "device", func(t *testing.T) outcome {
		return na("the Inspector has no device flow")
	})
}
