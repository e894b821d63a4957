package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/flows"
)

// host connects a go-sdk client to the proxy's stdio.
func host(t *testing.T, p *running, opts *mcp.ClientOptions) (*mcp.ClientSession, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts).Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nproxy log:\n%s", err, p.logged())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ctx
}

// A server that refuses connections (restarting) is waited for: the first
// POST is sent again once it listens, and the host never sees the outage.
func TestRedialsWhileTheServerIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // refused from now until the "restart" below

	s := mcp.NewServer(&mcp.Implementation{Name: "late-server", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var once sync.Once
	var slept []time.Duration
	var mu sync.Mutex
	restart := func(_ context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		n := len(slept)
		mu.Unlock()
		if n == 2 { // down for two attempts, then up again on the same port
			once.Do(func() {
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					t.Errorf("listening again on %s: %v", addr, err)
					return
				}
				srv := &http.Server{Handler: h}
				go srv.Serve(ln)
				t.Cleanup(func() { srv.Close() })
			})
		}
		return nil
	}
	p := start(t, Config{URL: "http://" + addr + "/mcp", Transport: Streamable, Sleep: restart})
	cs, ctx := host(t, p, nil)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after the restart: %v\n%s", err, p.logged())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(slept) != 2 || slept[0] != DefaultBackoff[0] || slept[1] != DefaultBackoff[1] {
		t.Errorf("pauses %v, want the first two of %v", slept, DefaultBackoff)
	}
	if !strings.Contains(p.logged(), "connection refused; trying again in 200ms (1 of 5)") {
		t.Errorf("log:\n%s", p.logged())
	}
}

// A server that stays down: the requests in flight share one schedule of
// pauses (one log line each, not one per request), every call is answered
// with an error naming the server in bounded time, later calls fail at
// once, and the proxy ends with a RemoteError (exit 6): it was never
// reachable.
func TestRedialGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var n int
	var mu sync.Mutex
	count := func(context.Context, time.Duration) error {
		mu.Lock()
		n++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // long enough for the other requests to join the pause
		return nil
	}
	p := start(t, Config{URL: "http://" + addr + "/mcp", Transport: Streamable, Sleep: count, Backoff: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}})
	out := &lines{t: t, sc: bufio.NewScanner(p.stdout)}
	for id := 1; id <= 4; id++ {
		io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/list"}`+"\n")
	}
	for range 4 {
		if m := out.next(); errCode(m) == 0 || !strings.Contains(sprintf("%v", m["error"]), addr) {
			t.Errorf("answer %v", m)
		}
	}
	io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`+"\n")
	if m := out.next(); errCode(m) == 0 {
		t.Errorf("after the outage: %v", m)
	}
	p.stdin.Close()
	select {
	case err := <-p.done:
		var re *RemoteError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "never reachable") {
			t.Errorf("Run returned %v", err)
		}
		p.done <- err
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 3 || strings.Count(p.logged(), "trying again") != 3 || strings.Count(p.logged(), "failing requests until") != 1 {
		t.Errorf("%d pauses for 5 requests, want 3 in all\n%s", n, p.logged())
	}
}

// scoped is a resource's scope check in front of a real go-sdk server:
// tools/call needs files:read, which only token "wide" carries. (The go-sdk
// auth middleware answers 403 without error="insufficient_scope", which
// SEP-2350 requires, so the check is written here.)
func scoped(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Authorization") != "Bearer wide" {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if strings.Contains(string(b), `"method":"tools/call"`) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:read", error_description="needs files:read"`)
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// stepAuth hands out "narrow" until StepUp is asked for files:read.
type stepAuth struct {
	staticAuth
	asked []string
}

func (a *stepAuth) Renew(ctx context.Context, rejected flows.Credential, r flows.Refusal) (flows.Credential, bool, error) {
	if r.Why != flows.RenewScope {
		return a.staticAuth.Renew(ctx, rejected, r)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Required)
	if r.Required != "files:read" {
		return rejected, false, nil
	}
	a.tok = "wide"
	return flows.Credential{Token: a.tok}, true, nil
}

func echoServer(t *testing.T, wrap func(http.Handler) http.Handler) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "scoped-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptestServer(t, wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	return srv + "/mcp"
}

// A 403 insufficient_scope with a scope: the credential steps up (a new
// login for that scope, in the CLI) and the call goes again, once.
func TestStepsUpOnInsufficientScope(t *testing.T) {
	auth := &stepAuth{staticAuth: staticAuth{tok: "narrow"}}
	p := start(t, Config{URL: echoServer(t, scoped), Transport: Streamable, Auth: auth})
	cs, ctx := host(t, p, nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after step-up"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "after step-up" {
		t.Fatalf("echo: %v %v\n%s", res, err, p.logged())
	}
	if len(auth.asked) != 1 || auth.asked[0] != "files:read" {
		t.Errorf("step-ups asked for %q, want one for files:read", auth.asked)
	}
}

// Without a way to step up (no --login), the host gets a JSON-RPC error
// naming the scope and the command that obtains it.
func TestInsufficientScopeTellsTheHostWhatToRun(t *testing.T) {
	hint := func(scope string) string { return "; run: mcpauth login URL --scope 'mcp " + scope + "'" }
	p := start(t, Config{URL: echoServer(t, scoped), Transport: Streamable, Auth: &staticAuth{tok: "narrow"}, ScopeHint: hint})
	cs, ctx := host(t, p, nil)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), `needs scope "files:read"`) || !strings.Contains(err.Error(), "--scope 'mcp files:read'") {
		t.Fatalf("echo without the scope: %v", err)
	}
	// The session goes on.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list afterwards: %v", err)
	}
}

// What the server sends while it works on a call (progress, log messages)
// reaches the host before the answer.
func TestServerNotificationsReachTheHost(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3}); err != nil {
				return nil, nil, err
			}
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "halfway"}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	url := httptestServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)) + "/mcp"
	var mu sync.Mutex
	var progress []float64
	var logs []any
	p := start(t, Config{URL: url, Transport: Streamable})
	cs, ctx := host(t, p, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, r.Params.Data)
			mu.Unlock()
		},
	})
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("work: %v %v", res, err)
	}
	// The client runs notification handlers apart from the call's answer:
	// wait (bounded) for them.
	for i := 0; ; i++ {
		mu.Lock()
		got := len(progress) == 3 && len(logs) == 1
		mu.Unlock()
		if got || i == 500 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 3 || progress[2] != 3 || len(logs) != 1 || logs[0] != "halfway" {
		t.Errorf("progress %v, logs %v; want 1,2,3 and halfway\n%s", progress, logs, p.logged())
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// A 2025-11-25 server sends what belongs to no request (here, a
// tools/list_changed after a tool is added) on the standalone GET stream,
// which the proxy keeps open for the host.
func TestServerMessagesOutsideRequestsReachTheHost(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateful", Version: "1"}, nil)
	gets := make(chan string, 16)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	url := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select {
			case gets <- r.Header.Get("Mcp-Session-Id"):
			default:
			}
		}
		h.ServeHTTP(w, r)
	})) + "/mcp"
	changed := make(chan struct{}, 16)
	p := start(t, Config{URL: url, Transport: Streamable})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case session := <-gets:
		if session == "" {
			t.Errorf("the stream was opened without the session id")
		}
	case <-ctx.Done():
		t.Fatalf("the proxy opened no GET stream\n%s", p.logged())
	}
	// The GET has reached the handler; the server registers the stream
	// just after, so add tools until a notification comes (bounded).
	for i := 0; ; i++ {
		mcp.AddTool(s, &mcp.Tool{Name: fmtSprintf("late-%d", i)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		select {
		case <-changed:
			return
		case <-time.After(200 * time.Millisecond):
		}
		if i == 20 {
			t.Fatalf("no tools/list_changed reached the host\n%s", p.logged())
		}
	}
}
