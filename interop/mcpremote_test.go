package interop

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// mcp-remote (the stdio bridge most desktop hosts use for remote servers)
// against the reference server: a go-sdk client talks MCP to mcp-remote
// on its stdio, mcp-remote logs in to mcpauth serve and forwards. The
// test is the person at the browser: it reads the authorization URL or
// the device code mcp-remote prints on stderr and approves it with the
// server's own pages.
func labMCPRemote(t *testing.T, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/mcp-remote", "mcp-remote", "mcp-remote")
	srv := newServeEnv(t)
	r := g.row("mcp-remote", version)
	remote := func(t *testing.T, configDir string, args ...string) remoteRun {
		return runMCPRemote(t, dir, srv, configDir, args...)
	}
	registered := t.TempDir()
	g.flow(t, r, "login (registration)", func(t *testing.T) outcome {
		run := remote(t, registered)
		if !run.authorized {
			t.Fatalf("mcp-remote connected without asking to authorize:\n%s", run.stderr)
		}
		return pass("")
	})
	g.flow(t, r, "tools", func(t *testing.T) outcome {
		run := remote(t, registered)
		if run.authorized {
			t.Fatalf("mcp-remote asked to authorize again with stored tokens:\n%s", run.stderr)
		}
		return pass("tools/list and tools/call whoami, with the tokens mcp-remote stored")
	})
	g.flow(t, r, "refresh", func(t *testing.T) outcome {
		srv.env.Clock.Advance(25 * time.Hour)
		var run remoteRun
		srv.refreshed(t, func() { run = remote(t, registered) })
		if run.authorized {
			t.Fatalf("after the clock moved, mcp-remote went back to the browser instead of refreshing:\n%s", run.stderr)
		}
		return pass("the server's clock moved 25 h, past the 24-hour access token's expiry; mcp-remote refreshed without a browser")
	})
	g.flow(t, r, "login (metadata document)", func(t *testing.T) outcome {
		port := freePort(t)
		doc := srv.metadataDocument(t, "http://localhost:"+port+"/oauth/callback")
		run := remote(t, t.TempDir(), port, "--client-metadata-url", doc)
		if !run.authorized || !strings.Contains(run.authURL, "client_id="+url.QueryEscape(doc)) {
			t.Fatalf("mcp-remote did not authorize as %s:\n%s", doc, run.stderr)
		}
		return pass("")
	})
	g.flow(t, r, "device", func(t *testing.T) outcome {
		run := remote(t, t.TempDir(), "--device-code")
		if run.userCode == "" {
			t.Fatalf("mcp-remote showed no device code:\n%s", run.stderr)
		}
		return pass("mcp-remote registers with `response_types: [\"code\"]` beside the device grant only; the server corrects it to `[]` (RFC 7591 §2: response_types must match the grant types)")
	})
}

// remoteRun is what one mcp-remote session did.
type remoteRun struct {
	authorized bool   // it asked for a browser authorization
	authURL    string // the URL it asked for
	userCode   string // the device code it showed
	stderr     string
}

// runMCPRemote runs one session through mcp-remote: initialize, tools/list
// and tools/call whoami, approving whatever it asks on the way.
func runMCPRemote(t *testing.T, dir string, s *serveEnv, configDir string, args ...string) remoteRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := nodeCommand(ctx, dir, append([]string{"node_modules/mcp-remote/dist/proxy.js", s.env.URL + "/mcp"}, args...),
		// Nothing opens a real browser: the test reads the URL from the log.
		"MCP_REMOTE_CONFIG_DIR="+configDir, "BROWSER=true")
	var run remoteRun
	visiting, device := false, false
	log, stop := watchLines(&cmd.Stderr, func(line string) {
		line = strings.TrimSpace(pidPrefix.ReplaceAllString(line, ""))
		switch {
		case strings.Contains(line, "Please authorize this client by visiting"):
			visiting = true
		case strings.Contains(line, "To authorize this client, visit:"):
			device = true
		case visiting && strings.HasPrefix(line, "http"):
			visiting = false
			run.authorized, run.authURL = true, line
			if err := approveAt(ctx, s, line); err != nil {
				t.Logf("approving %s failed: %v", line, err)
			}
		case device && strings.HasPrefix(line, "http"):
			// The verification URI, complete with the code (RFC 8628 §3.3.1).
			if u, err := url.Parse(line); err == nil {
				run.userCode = u.Query().Get("user_code")
			}
		case device && strings.Contains(line, "enter the code:"):
			run.userCode = strings.TrimSpace(line[strings.LastIndex(line, ":")+1:])
		case device && strings.HasPrefix(line, "Waiting for approval"):
			device = false
			if _, err := s.env.Browser("alice").Device(ctx, run.userCode, "approve"); err != nil {
				t.Logf("approving device code %s failed: %v", run.userCode, err)
			}
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpauth-interop-host", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		stop()
		t.Fatalf("initialize through mcp-remote: %v\nmcp-remote stderr:\n%s", err, log.String())
	}
	checkWhoami(t, ctx, session, log.String)
	session.Close()
	stop()
	run.stderr = log.String()
	return run
}

// pidPrefix is what mcp-remote puts before each line it logs.
var pidPrefix = regexp.MustCompile(`^\[\d+\] ?`)
