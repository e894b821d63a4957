package mcpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/flows"
)

// recorder keeps the headers of every POST the server got.
type recorder struct {
	mu    sync.Mutex
	posts []http.Header
	want  string // the only Bearer token accepted ("" = any)
	n401  int
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		if req.Method == http.MethodPost {
			r.posts = append(r.posts, req.Header.Clone())
		}
		if r.want != "" && req.Header.Get("Authorization") != "Bearer "+r.want {
			r.n401++
			r.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.posts...)
}

type echoArgs struct {
	Text string `json:"text"`
}

// mcpServer is a stateful go-sdk server (it hands out Mcp-Session-Id).
func mcpServer(t *testing.T, rec *recorder) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(rec.wrap(h))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

type staticAuth struct {
	mu     sync.Mutex
	tok    string
	next   string
	renews int
}

func (a *staticAuth) Credential(context.Context) (flows.Credential, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return flows.Credential{Token: a.tok}, nil
}

func (a *staticAuth) Renew(_ context.Context, rejected flows.Credential, r flows.Refusal) (flows.Credential, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok != rejected.Token {
		return flows.Credential{Token: a.tok}, true, nil
	}
	if a.next == "" || r.Why == flows.RenewScope {
		return rejected, false, nil
	}
	a.renews++
	a.tok, a.next = a.next, ""
	return flows.Credential{Token: a.tok}, true, nil
}

// running is a proxy on pipes.
type running struct {
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	done   chan error
	log    *strings.Builder
	logMu  *sync.Mutex
}

func start(t *testing.T, cfg Config) *running {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &running{stdin: inW, stdout: outR, done: make(chan error, 1), log: &strings.Builder{}, logMu: &sync.Mutex{}}
	cfg.In, cfg.Out = inR, outW
	cfg.Log = func(format string, args ...any) {
		r.logMu.Lock()
		defer r.logMu.Unlock()
		r.log.WriteString(strings.TrimSpace(sprintf(format, args...)) + "\n")
	}
	go func() {
		err := Run(context.Background(), cfg)
		outW.Close()
		r.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Error("the proxy did not stop")
		}
		if t.Failed() {
			t.Logf("proxy log:\n%s", r.logged())
		}
	})
	return r
}

func (r *running) logged() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.log.String()
}

// A go-sdk client on the proxy's stdio that initializes the old way
// (2025-11-25): after the forwarded initialize, requests carry the session
// id (the SDK's raw connection takes it from the answer) and the negotiated
// MCP-Protocol-Version (which the raw connection alone would not send).
func TestForwardsToStatefulServerWithSessionAndVersion(t *testing.T) {
	rec := &recorder{want: "t1"}
	url := mcpServer(t, rec)
	p := start(t, Config{URL: url, Transport: Streamable, Auth: &staticAuth{tok: "t1"}, Headers: http.Header{"X-Tenant": {"acme"}}})
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("echo: %v %v", res, err)
	}
	hs := rec.headers()
	if len(hs) < 4 {
		t.Fatalf("%d POSTs", len(hs))
	}
	for i, h := range hs {
		if h.Get("X-Tenant") != "acme" {
			t.Errorf("POST %d: no --header", i)
		}
	}
	if hs[0].Get("Mcp-Session-Id") != "" {
		t.Errorf("initialize sent a session id")
	}
	session := ""
	for i, h := range hs[1:] {
		if session == "" {
			session = h.Get("Mcp-Session-Id")
		}
		if h.Get("Mcp-Session-Id") == "" || h.Get("Mcp-Session-Id") != session {
			t.Errorf("POST %d: session id %q", i+1, h.Get("Mcp-Session-Id"))
		}
		if h.Get("Mcp-Protocol-Version") != "2025-11-25" {
			t.Errorf("POST %d: MCP-Protocol-Version %q", i+1, h.Get("Mcp-Protocol-Version"))
		}
	}
	cs.Close()
}

// What the proxy works around: go-sdk's raw Streamable HTTP connection, with
// initialize written to it directly, keeps the session id but sends no
// MCP-Protocol-Version afterwards (it learns the version only from a
// ClientSession).
func TestRawSDKConnectionSendsNoVersionAfterInitialize(t *testing.T) {
	rec := &recorder{}
	url := mcpServer(t, rec)
	ctx := context.Background()
	conn, err := (&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	write := func(line string) {
		m, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	hs := rec.headers()
	last := hs[len(hs)-1]
	if last.Get("Mcp-Session-Id") == "" {
		t.Error("no session id after initialize")
	}
	if v := last.Get("Mcp-Protocol-Version"); v != "" {
		t.Errorf("MCP-Protocol-Version %q: the SDK now sends it, the proxy's workaround may go", v)
	}
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return strings.TrimSpace(fmtSprintf(format, args...))
}

// lines reads the proxy's stdout as JSON-RPC responses.
type lines struct {
	t  *testing.T
	sc *bufio.Scanner
}

func (l *lines) next() map[string]any {
	l.t.Helper()
	ch := make(chan map[string]any, 1)
	go func() {
		if !l.sc.Scan() {
			ch <- nil
			return
		}
		var m map[string]any
		if err := json.Unmarshal(l.sc.Bytes(), &m); err != nil {
			m = map[string]any{"unparsable": l.sc.Text()}
		}
		ch <- m
	}()
	select {
	case m := <-ch:
		if m == nil {
			l.t.Fatal("stdout ended")
		}
		return m
	case <-time.After(10 * time.Second):
		l.t.Fatal("no answer on stdout")
	}
	return nil
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// Bad input never ends the session: a line that is not JSON is only logged,
// JSON that is not JSON-RPC and an oversized message with an id get an
// error for that id, and the next request is answered as usual.
func TestBadInputFromHost(t *testing.T) {
	rec := &recorder{}
	url := mcpServer(t, rec)
	p := start(t, Config{URL: url, Transport: Streamable, MaxMessage: 1024})
	out := &lines{t: t, sc: bufio.NewScanner(p.stdout)}
	out.sc.Buffer(nil, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(p.stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("this is not JSON")
	send(`{"id":8,"hello":"world"}`)
	if m := out.next(); m["id"] != 8.0 || errCode(m) != jsonrpc.CodeInvalidRequest {
		t.Fatalf("not JSON-RPC: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`)
	if m := out.next(); m["id"] != 9.0 || errCode(m) != jsonrpc.CodeInvalidRequest {
		t.Fatalf("oversized: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if m := out.next(); m["id"] != 10.0 || m["result"] == nil {
		t.Fatalf("initialize after bad input: %v", m)
	}
	log := p.logged()
	for _, want := range []string{"not JSON was dropped", "not a JSON-RPC 2.0 message", "more than 1024 bytes"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// A server answering HTML, or 500, gets the host a JSON-RPC error for that
// request, and the proxy goes on; closing stdin ends it at once with nil.
func TestBrokenServerAnswersBecomeErrors(t *testing.T) {
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k%2 == 1 {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Welcome to nginx</body></html>")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "<html><body>Internal Server Error</body></html>")
	}))
	t.Cleanup(srv.Close)
	p := start(t, Config{URL: srv.URL + "/mcp", Transport: Streamable})
	out := &lines{t: t, sc: bufio.NewScanner(p.stdout)}
	for id := 1; id <= 4; id++ {
		io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/list"}`+"\n")
		m := out.next()
		e, _ := m["error"].(map[string]any)
		if m["id"] != float64(id) || e == nil || !strings.Contains(e["message"].(string), "HTTP") {
			t.Fatalf("request %d: %v", id, m)
		}
	}
	startClose := time.Now()
	p.stdin.Close()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		p.done <- nil
	case <-time.After(time.Second):
		t.Fatal("no exit within a second of stdin closing")
	}
	if d := time.Since(startClose); d > time.Second {
		t.Fatalf("took %s", d)
	}
}

// A 401 invalid_token renews the credential once and sends the request
// again; the host never sees the 401.
func TestRenewsOn401(t *testing.T) {
	rec := &recorder{want: "t2"}
	url := mcpServer(t, rec)
	auth := &staticAuth{tok: "t1", next: "t2"}
	p := start(t, Config{URL: url, Transport: Streamable, Auth: auth})
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if auth.renews != 1 || rec.n401 != 1 {
		t.Errorf("%d renewals, %d 401s; want 1 and 1", auth.renews, rec.n401)
	}
	cs.Close()
}

var fmtSprintf = fmt.Sprintf

// auto: a server with only the legacy HTTP+SSE transport answers the first
// POST with a 4xx that is not JSON-RPC; the proxy opens the SSE stream and
// the session goes on there.
func TestAutoFallsBackToSSE(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sse-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	rec := &recorder{want: "t1"}
	srv := httptest.NewServer(rec.wrap(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	t.Cleanup(srv.Close)
	p := start(t, Config{URL: srv.URL + "/sse", Auth: &staticAuth{tok: "t1"}})
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over sse"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "over sse" {
		t.Fatalf("echo: %v %v", res, err)
	}
	if !strings.Contains(p.logged(), "trying the legacy HTTP+SSE transport") {
		t.Errorf("log:\n%s", p.logged())
	}
	cs.Close()
}

// A stateful server that forgets the session (a restart) answers 404: the
// SDK ends the connection, the host gets an error for its request, and Run
// returns a *RemoteError (exit 6 in the CLI) instead of hanging.
func TestSessionLostEndsProxy(t *testing.T) {
	rec := &recorder{}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var forget sync.Mutex
	forgotten, served := false, 0
	srv := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forget.Lock()
		f := forgotten
		forget.Unlock()
		if f && r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
		forget.Lock()
		served++
		forget.Unlock()
	})))
	t.Cleanup(srv.Close)
	p := start(t, Config{URL: srv.URL + "/mcp", Transport: Streamable})
	out := &lines{t: t, sc: bufio.NewScanner(p.stdout)}
	io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	if m := out.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	io.WriteString(p.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i := 0; ; i++ { // until the notification has been served
		forget.Lock()
		n := served
		forget.Unlock()
		if n >= 2 {
			break
		}
		if i > 500 {
			t.Fatal("notifications/initialized never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	forget.Lock()
	forgotten = true
	forget.Unlock()
	io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	if m := out.next(); m["id"] != 2.0 || m["error"] == nil {
		t.Fatalf("tools/list after the session was lost: %v", m)
	}
	select {
	case err := <-p.done:
		var re *RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("Run: %v, want a RemoteError", err)
		}
		p.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy went on without a session")
	}
}
