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
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// serveEnv is the reference server in process, with a fake clock, and a
// TLS server for client metadata documents the reference server trusts.
type serveEnv struct {
	env  *servertest.Env
	doc  *httptest.Server
	mu   sync.Mutex
	docs map[string]string // a document's path to its redirect URI
	// refreshes counts the refresh token grants the server was asked for.
	refreshes atomic.Int64
	// answered counts the MCP requests with a token that the server
	// answered 200, by JSON-RPC method.
	answered map[string]int
}

func newServeEnv(t *testing.T) *serveEnv {
	t.Helper()
	s := &serveEnv{docs: map[string]string{}, answered: map[string]int{}}
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
		Wrap:              s.count,
	})
	return s
}

// count counts the token requests with grant_type=refresh_token and the
// MCP requests with a token answered 200 (bodies read up to 64 KiB and
// handed on unchanged).
func (s *serveEnv) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		r.Body = io.NopCloser(bytes.NewReader(b))
		if v, err := url.ParseQuery(string(b)); err == nil && v.Get("grant_type") == "refresh_token" {
			s.refreshes.Add(1)
		}
		var call struct{ Method string }
		if r.URL.Path != "/mcp" || r.Header.Get("Authorization") == "" || json.Unmarshal(b, &call) != nil || call.Method == "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.status == http.StatusOK {
			s.mu.Lock()
			s.answered[call.Method]++
			s.mu.Unlock()
		}
	})
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush keeps streamed (SSE) answers streaming.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
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

// served runs fn and fails t unless the MCP endpoint answered method with
// a token meanwhile: whatever the client showed, the token reached the
// server.
func (s *serveEnv) served(t *testing.T, method string, fn func()) {
	t.Helper()
	count := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.answered[method]
	}
	before := count()
	fn()
	if count() == before {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Fatalf("the MCP server answered no %s with a token (answered by method: %v)", method, s.answered)
	}
}

// watchLines sends what a command writes to *w (its Stderr or Stdout), line
// by line, to fn (on one goroutine, in order) and keeps it; stop waits
// until the last line has been handled, after the command has ended.
func watchLines(w *io.Writer, fn func(line string)) (log *syncbuf.Buffer, stop func()) {
	pr, pw := io.Pipe()
	*w = pw
	log = &syncbuf.Buffer{}
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
