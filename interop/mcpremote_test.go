package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/internal/tsserver"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
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

// serveEnv is the reference server in process, with a fake clock, and a
// TLS server for client metadata documents the reference server trusts.
type serveEnv struct {
	env  *servertest.Env
	doc  *httptest.Server
	mu   sync.Mutex
	docs map[string]string // a document's path to its redirect URI
	// refreshes counts the refresh token grants the server was asked for.
	refreshes atomic.Int64
}

func newServeEnv(t *testing.T) *serveEnv {
	t.Helper()
	s := &serveEnv{docs: map[string]string{}}
	s.doc = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		redirect, ok := s.docs[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id":                  "https://" + r.Host + r.URL.Path,
			"client_name":                "mcpauth interop lab client",
			"redirect_uris":              []string{redirect},
			"grant_types":                []string{"authorization_code", "refresh_token"},
			"response_types":             []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	}))
	s.doc.StartTLS()
	t.Cleanup(s.doc.Close)
	roots := x509.NewCertPool()
	roots.AddCert(s.doc.Certificate())
	s.env = servertest.New(t, servertest.Options{
		MetadataDocuments: server.MetadataDocumentConfig{AllowPrivateAddresses: true, RootCAs: roots},
		Wrap:              s.countRefreshes,
	})
	return s
}

// countRefreshes counts the token requests with grant_type=refresh_token
// (a form body, read up to 64 KiB and handed on unchanged).
func (s *serveEnv) countRefreshes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			r.Body = io.NopCloser(bytes.NewReader(b))
			if v, err := url.ParseQuery(string(b)); err == nil && v.Get("grant_type") == "refresh_token" {
				s.refreshes.Add(1)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refreshed runs fn and fails t unless fn made the server refresh a token.
func (s *serveEnv) refreshed(t *testing.T, fn func()) {
	t.Helper()
	before := s.refreshes.Load()
	fn()
	if s.refreshes.Load() == before {
		t.Fatalf("no refresh token grant reached the server")
	}
}

// metadataDocument hosts a client metadata document naming redirect and
// returns its URL (the client id). Call before the clients run.
func (s *serveEnv) metadataDocument(t *testing.T, redirect string) string {
	t.Helper()
	path := "/client-" + filepath.Base(t.TempDir()) + ".json"
	s.mu.Lock()
	s.docs[path] = redirect
	s.mu.Unlock()
	return s.doc.URL + path
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

// watchLines sends what a command writes to *w (its Stderr or Stdout), line
// by line, to fn (on one goroutine, in order) and keeps it; stop waits
// until the last line has been handled, after the command has ended.
func watchLines(w *io.Writer, fn func(line string)) (log *tsserver.LockedBuffer, stop func()) {
	pr, pw := io.Pipe()
	*w = pw
	log = &tsserver.LockedBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			fn(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return log, func() { pw.Close(); <-done }
}

// pidPrefix is what mcp-remote puts before each line it logs.
var pidPrefix = regexp.MustCompile(`^\[\d+\] ?`)

// approveAt signs in as alice at the reference server, approves the
// authorization request and takes the browser to the client's callback.
func approveAt(ctx context.Context, s *serveEnv, authURL string) error {
	back, err := s.env.Browser("alice").Consent(ctx, authURL, "approve")
	if err != nil {
		return err
	}
	resp, err := http.Get(back.String())
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// checkWhoami lists the tools and calls the reference server's whoami.
func checkWhoami(t *testing.T, ctx context.Context, session *mcp.ClientSession, logs func() string) {
	t.Helper()
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, logs())
	}
	names := []string{}
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "whoami") {
		t.Fatalf("tools/list has no whoami: %v", names)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("tools/call whoami: %v %+v\n%s", err, res, logs())
	}
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "alice") {
		t.Fatalf("whoami does not name alice: %s", raw)
	}
}
