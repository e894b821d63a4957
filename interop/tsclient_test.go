package interop

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// The MCP TypeScript SDK's OAuth client (testdata/mcp-ts-server/client.mjs,
// also run by server/tsclient_test.go) against the reference server: it
// registers (or names a client metadata document), the test approves as
// alice, it calls whoami; then the server's clock moves past the access
// token's expiry and it calls whoami again with the tokens it holds.
func labTSClient(t *testing.T, g *grid) {
	dir, version := tsserver.Require(t)
	srv := newServeEnv(t)
	r := g.row("MCP TypeScript SDK client", version)
	const redirect = "http://127.0.0.1:9/callback" // the test carries the code
	var registered tsRun
	g.flow(t, r, "login (registration)", func(t *testing.T) outcome {
		registered = runTSClient(t, dir, srv, redirect, "")
		if !strings.Contains(registered.out, "REGISTERED ") || strings.Contains(registered.out, "REGISTERED https://") {
			t.Fatalf("the SDK client did not register dynamically:\n%s", registered.out)
		}
		return pass("")
	})
	g.flow(t, r, "tools", func(t *testing.T) outcome {
		if strings.Count(registered.out, "WHOAMI ") < 2 || !strings.Contains(registered.out, "alice") {
			t.Fatalf("whoami did not answer twice for alice:\n%s", registered.out)
		}
		return pass("")
	})
	g.flow(t, r, "refresh", func(t *testing.T) outcome {
		if registered.refreshes == 0 {
			t.Fatalf("no refresh grant after the clock moved:\n%s", registered.out)
		}
		return pass("")
	})
	g.flow(t, r, "login (metadata document)", func(t *testing.T) outcome {
		doc := srv.metadataDocument(t, redirect)
		run := runTSClient(t, dir, srv, redirect, doc)
		if !strings.Contains(run.out, "REGISTERED "+doc+"\n") {
			t.Fatalf("the client id is not the metadata document URL %s:\n%s", doc, run.out)
		}
		return pass("")
	})
	g.flow(t, r, "device", func(t *testing.T) outcome { return na("the SDK has no device flow") })
}

type tsRun struct {
	out       string
	refreshes int64 // refresh grants the server answered during the run
}

func runTSClient(t *testing.T, dir string, s *serveEnv, redirect, metadataURL string) tsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{filepath.Join(dir, "client.mjs"), s.env.URL + "/mcp", redirect}
	if metadataURL != "" {
		args = append(args, metadataURL)
	}
	cmd := nodeCommand(ctx, dir, args, "MCP_CLIENT_AGAIN=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	before := s.refreshes.Load()
	out, stop := watchLines(&cmd.Stdout, func(line string) {
		switch {
		case strings.HasPrefix(line, "AUTHORIZE "):
			back, err := s.env.Browser("alice").Consent(ctx, strings.TrimPrefix(line, "AUTHORIZE "), "approve")
			code := ""
			if err == nil {
				code = back.Query().Get("code")
			} else {
				t.Logf("approving failed: %v", err)
			}
			_, _ = io.WriteString(stdin, code+"\n")
		case line == "AGAIN?":
			s.env.Clock.Advance(25 * time.Hour)
			_, _ = io.WriteString(stdin, "\n")
		}
	})
	err = cmd.Run()
	stop()
	if err != nil {
		t.Fatalf("node client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	return tsRun{out: out.String(), refreshes: s.refreshes.Load() - before}
}
