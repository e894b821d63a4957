package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/syncbuf"
)

// The real binaries: `mcpauth serve --test-clock` (SQLite in a temp dir),
// `mcpauth login` with this test binary as the browser (it signs in and
// approves through the server's own pages, as conformance's FormApprover
// does), then `mcpauth proxy` as a subprocess driven by go-sdk's client over
// mcp.CommandTransport.

const browserEnv = "MCPAUTH_PROXY_TEST_BROWSER"

func TestMain(m *testing.M) {
	if os.Getenv(browserEnv) != "" {
		os.Exit(browse(os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// browse approves authURL as user "proxy-user" and follows the redirect to
// the CLI's loopback callback.
func browse(authURL string) int {
	u, err := url.Parse(authURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	a, err := approve.NewFormApprover(u.Scheme+"://"+u.Host, "proxy-user", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Browse(ctx, authURL); err != nil {
		fmt.Fprintln(os.Stderr, "browse:", err)
		return 1
	}
	return 0
}

var (
	buildOnce sync.Once
	bin       string
	buildErr  error
)

func build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpauth-proxy-bin-")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "mcpauth")
		if out, err := exec.Command("go", "build", "-o", bin, "../mcpauth").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building mcpauth: %v", buildErr)
	}
	return bin
}

type env struct {
	t    testing.TB
	bin  string
	base string
	env  []string
	addr string // the server's address and database, kept for restarts
	db   string
	srv  *exec.Cmd
	out  *bytes.Buffer
}

// serve starts `mcpauth serve --test-clock` and returns the harness with
// file storage in a temp config dir.
func serve(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, bin: build(t), db: filepath.Join(t.TempDir(), "mcpauth.db")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ln.Close()
	e.base = "http://" + e.addr
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.env = append(os.Environ(), "MCPAUTH_CONFIG_DIR="+t.TempDir(), "MCPAUTH_STORAGE=file",
		"MCPAUTH_BROWSER="+self, browserEnv+"=1", "MCPAUTH_TOKEN=")
	e.start()
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			t.Logf("server output:\n%s", e.out.String())
		}
	})
	return e
}

// start runs the server on e.addr with e.db and waits until it is healthy.
func (e *env) start() {
	e.t.Helper()
	srv := exec.Command(e.bin, "serve", "--addr", e.addr, "--db", e.db, "--test-clock", "--no-rate-limits")
	if e.out == nil {
		e.out = &bytes.Buffer{}
	}
	srv.Stdout, srv.Stderr = e.out, e.out
	if err := srv.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.srv = srv
	for i := 0; ; i++ {
		if resp, err := http.Get(e.base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 400 {
			e.t.Fatalf("server did not start:\n%s", e.out.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// advance moves the server's test clock forward by d, and checks it moved.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	if err := (&conformance.HTTPClock{URL: e.base + "/api/test/clock"}).Advance(context.Background(), d); err != nil {
		e.t.Fatal(err)
	}
}

// stop ends the server (SIGINT, as a deploy would) and waits for it.
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	_ = e.srv.Process.Signal(os.Interrupt)
	_ = e.srv.Wait()
	e.srv = nil
}

func (e *env) cli(args ...string) (int, string, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

func (e *env) login() {
	e.t.Helper()
	if code, _, stderr := e.cli("login", e.base+"/mcp", "--timeout", "60s"); code != 0 {
		e.t.Fatalf("login exit %d:\n%s", code, stderr)
	}
}

// proxy starts `mcpauth proxy` under a go-sdk client session.
func (e *env) proxy(ctx context.Context, stderr *logBuffer, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"proxy", e.base + "/mcp"}, args...)...)
	cmd.Env = e.env
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "proxy-e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("connect through the proxy: %v\n%s", err, stderr.String())
	}
	return cs, cmd
}

func whoami(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return "", err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return "", fmt.Errorf("tool error: %s", b)
	}
	var out struct {
		UserID string `json:"user_id"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.UserID == "" {
		return "", fmt.Errorf("whoami answered %s", b)
	}
	return out.UserID, nil
}

// logBuffer is the proxy's stderr as the test reads it.
type logBuffer struct{ syncbuf.Buffer }

// waitFor reports whether every one of subs appears within five seconds. The
// proxy writes its log before it answers, but os/exec copies the child's
// stderr pipe in a goroutine of its own, so a line may land after the answer
// the test has already read.
func (s *logBuffer) waitFor(subs ...string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := s.String()
		all := true
		for _, sub := range subs {
			all = all && strings.Contains(out, sub)
		}
		if all {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProxyE2ELoginWhoamiRefreshAndExit(t *testing.T) {
	e := serve(t)
	e.login()
	_, want, _ := e.cli("ping")
	want = strings.TrimSpace(want)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, cmd := e.proxy(ctx, &stderr)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 || tools.Tools[0].Name != "whoami" {
		t.Fatalf("tools/list: %v %v\n%s", tools, err, stderr.String())
	}
	if user, err := whoami(ctx, cs); err != nil || user != want {
		t.Fatalf("whoami: %q %v, want %q\n%s", user, err, want, stderr.String())
	}

	// A day later the access token has expired at the server: the next call
	// gets a 401, the proxy refreshes under the lock and sends it again.
	e.advance(24*time.Hour + time.Minute)
	if user, err := whoami(ctx, cs); err != nil || user != want {
		t.Fatalf("whoami after a day: %q %v\n%s", user, err, stderr.String())
	}
	if !stderr.waitFor("renewed it") {
		t.Errorf("stderr does not say the token was renewed:\n%s", stderr.String())
	}
	// The refreshed token was stored: a plain ping works without refreshing.
	if code, out, errOut := e.cli("ping"); code != 0 || strings.TrimSpace(out) != want {
		t.Errorf("ping after the proxy refreshed: %d %q %s", code, out, errOut)
	}

	// Closing stdin (the SDK's CommandTransport closes it first) ends the
	// proxy with exit 0 within a second.
	start := time.Now()
	done := make(chan struct{})
	go func() { cs.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the session hung")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the proxy took %s to exit after stdin closed", d)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit state %v\n%s", cmd.ProcessState, stderr.String())
	}
}

// stdout carries protocol messages only; without a credential the proxy
// exits 3 at once with the login hint on stderr.
func TestProxyE2ENoCredentialExits3(t *testing.T) {
	e := serve(t)
	cmd := exec.Command(e.bin, "proxy", e.base+"/mcp")
	cmd.Env = e.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3\n%s", err, errOut.String())
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "mcpauth login") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// MCPAUTH_TOKEN works as elsewhere: an API key read from Settings.
func TestProxyE2EWithMCPAUTHTOKEN(t *testing.T) {
	e := serve(t)
	a, err := approve.NewFormApprover(e.base, "key-user", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key, err := a.APIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "MCPAUTH_TOKEN="+key)
	var stderr logBuffer
	logFile := filepath.Join(t.TempDir(), "proxy.log")
	cs, _ := e.proxy(ctx, &stderr, "--transport", "streamable", "--log-file", logFile)
	if user, err := whoami(ctx, cs); err != nil || !strings.HasPrefix(user, "u_") {
		t.Fatalf("whoami with MCPAUTH_TOKEN: %q %v\n%s", user, err, stderr.String())
	}
	cs.Close()
	logged, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(logged), "forwarding stdio to "+e.base+"/mcp (transport streamable, MCPAUTH_TOKEN credential)") {
		t.Errorf("--log-file holds %q (%v)", logged, err)
	}
	if strings.Contains(string(logged), key) || strings.Contains(stderr.String(), key) {
		t.Error("the API key was logged")
	}
	t.Logf("stderr:\n%s", stderr.String())
}

// BenchmarkProxyLatency compares whoami through the proxy with whoami
// straight over Streamable HTTP (go-sdk client, same token) and reports
// the median and p99 of each. Run: go test ./cmd/proxy -run '^$' -bench ProxyLatency -benchtime 2000x
func BenchmarkProxyLatency(b *testing.B) {
	e := serve(b)
	a, err := approve.NewFormApprover(e.base, "bench-user", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	key, err := a.APIKey(ctx)
	if err != nil {
		b.Fatal(err)
	}
	e.env = append(e.env, "MCPAUTH_TOKEN="+key)
	var stderr logBuffer
	viaProxy, _ := e.proxy(ctx, &stderr, "--transport", "streamable")
	defer viaProxy.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	direct, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	measure := func(cs *mcp.ClientSession) []time.Duration {
		ds := make([]time.Duration, 0, b.N)
		for range b.N {
			t0 := time.Now()
			if _, err := whoami(ctx, cs); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds
	}
	b.ResetTimer()
	d := measure(direct)
	p := measure(viaProxy)
	q := func(ds []time.Duration, f float64) float64 {
		return float64(ds[int(f*float64(len(ds)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(d, 0.5), "direct-p50-ms")
	b.ReportMetric(q(d, 0.99), "direct-p99-ms")
	b.ReportMetric(q(p, 0.5), "proxy-p50-ms")
	b.ReportMetric(q(p, 0.99), "proxy-p99-ms")
}

type bearer struct{ key string }

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	return http.DefaultTransport.RoundTrip(r)
}

// --login: with nothing stored the proxy logs in first (browser as login
// does, progress on stderr, stdout untouched) and then serves the host.
func TestProxyE2ELoginFromInside(t *testing.T) {
	e := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, _ := e.proxy(ctx, &stderr, "--login")
	defer cs.Close()
	if user, err := whoami(ctx, cs); err != nil || !strings.HasPrefix(user, "u_") {
		t.Fatalf("whoami after --login: %q %v\n%s", user, err, stderr.String())
	}
	if !stderr.waitFor("logging in to", "logged in (token expires") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if code, _, errOut := e.cli("ping"); code != 0 {
		t.Errorf("the proxy's login was not stored: ping exit %d %s", code, errOut)
	}
}

// Two hosts, each with its own proxy on the same login, both hit the
// expired token at once: the entry lock lets one refresh and the other take
// the stored result. Had both redeemed the refresh token, the server would
// have revoked the family and one call (or the next) would fail.
func TestProxyE2ETwoProxiesRefreshOnce(t *testing.T) {
	e := serve(t)
	e.login()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err1, err2 logBuffer
	a, _ := e.proxy(ctx, &err1)
	defer a.Close()
	b, _ := e.proxy(ctx, &err2)
	defer b.Close()
	e.advance(24*time.Hour + time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = whoami(ctx, cs)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("whoami: %v / %v\n%s\n%s", errs[0], errs[1], err1.String(), err2.String())
	}
	// Both again: a revoked family would show now.
	for _, cs := range []*mcp.ClientSession{a, b} {
		if _, err := whoami(ctx, cs); err != nil {
			t.Fatalf("whoami after the refresh: %v\n%s\n%s", err, err1.String(), err2.String())
		}
	}
	if code, _, errOut := e.cli("ping"); code != 0 {
		t.Errorf("ping: %d %s", code, errOut)
	}
}

// After `mcpauth logout` (which revokes the family) the host gets a
// JSON-RPC tool-call error naming `mcpauth login`, not a dead session; a
// login in a terminal then fixes the running proxy without a restart.
func TestProxyE2ELogoutThenLoginAgain(t *testing.T) {
	e := serve(t)
	e.login()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, _ := e.proxy(ctx, &stderr)
	defer cs.Close()
	if _, err := whoami(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.cli("logout"); code != 0 {
		t.Fatalf("logout: %d %s", code, errOut)
	}
	_, err := whoami(ctx, cs)
	if err == nil || !strings.Contains(err.Error(), "mcpauth login") {
		t.Fatalf("whoami after logout: %v, want an error naming mcpauth login\n%s", err, stderr.String())
	}
	e.login()
	if user, err := whoami(ctx, cs); err != nil || !strings.HasPrefix(user, "u_") {
		t.Fatalf("whoami after logging in again: %q %v\n%s", user, err, stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
}

// The server restarts (a deploy) while a host keeps the proxy running: the
// next call reaches the new process with the same credential, because
// /mcp is stateless and the proxy holds no connection state that the
// restart invalidates.
func TestProxyE2EServerRestartMidSession(t *testing.T) {
	e := serve(t)
	e.login()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, _ := e.proxy(ctx, &stderr)
	defer cs.Close()
	before, err := whoami(ctx, cs)
	if err != nil {
		t.Fatalf("whoami: %v\n%s", err, stderr.String())
	}
	e.stop()
	e.start()
	after, err := whoami(ctx, cs)
	if err != nil || after != before {
		t.Fatalf("whoami after the server restarted: %q, %v (before: %q)\nproxy stderr:\n%s", after, err, before, stderr.String())
	}
}

// --login on a machine with no browser to open (an SSH session): the proxy
// logs in with the device flow, shows the code on stderr, and serves the
// host once the code is approved elsewhere (here, through the server's own
// device page, as a person on another device would).
func TestProxyE2EDeviceLoginWithoutBrowser(t *testing.T) {
	e := serve(t)
	var headless []string
	for _, kv := range e.env {
		if k, _, _ := strings.Cut(kv, "="); k != "MCPAUTH_BROWSER" && k != "DISPLAY" && k != "WAYLAND_DISPLAY" {
			headless = append(headless, kv)
		}
	}
	e.env = append(headless, "SSH_CONNECTION=127.0.0.1 50000 127.0.0.1 22")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stderr logBuffer
	cmd := exec.Command(e.bin, "proxy", e.base+"/mcp", "--login")
	cmd.Env, cmd.Stderr = e.env, &stderr
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "proxy-e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		done <- connected{cs, err}
	}()

	if !stderr.waitFor("with the device flow (no browser: this is an SSH session)", "Enter: ") {
		t.Fatalf("no device code on stderr:\n%s", stderr.String())
	}
	m := regexp.MustCompile(`Open:\s+(\S+)[\s\S]*?Enter:\s+(\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("cannot read the verification URL and code:\n%s", stderr.String())
	}
	a, err := approve.NewFormApprover(e.base, "device-proxy-user", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ApproveDevice(ctx, m[1], m[2]); err != nil {
		t.Fatalf("approving %s at %s: %v", m[2], m[1], err)
	}
	c := <-done
	if c.err != nil {
		t.Fatalf("connect after the device login: %v\n%s", c.err, stderr.String())
	}
	defer c.cs.Close()
	if user, err := whoami(ctx, c.cs); err != nil || !strings.HasPrefix(user, "u_") {
		t.Fatalf("whoami after the device login: %q %v\n%s", user, err, stderr.String())
	}
	if code, _, errOut := e.cli("ping"); code != 0 {
		t.Errorf("the device login was not stored: ping exit %d %s", code, errOut)
	}
}

// --debug traces every request the proxy makes, the refresh included, and
// no credential reaches the trace: not the access tokens before and after
// the refresh, not the refresh token.
func TestProxyE2EDebugTraceRedactsSecrets(t *testing.T) {
	e := serve(t)
	e.login()
	_, before, _ := e.cli("token")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, _ := e.proxy(ctx, &stderr, "--debug")
	if _, err := whoami(ctx, cs); err != nil {
		t.Fatalf("whoami: %v\n%s", err, stderr.String())
	}
	e.advance(24*time.Hour + time.Minute)
	if _, err := whoami(ctx, cs); err != nil {
		t.Fatalf("whoami after a day: %v\n%s", err, stderr.String())
	}
	cs.Close()
	_, after, _ := e.cli("token")
	before, after = strings.TrimSpace(before), strings.TrimSpace(after)
	if before == "" || after == "" || before == after {
		t.Fatalf("tokens before and after the refresh: %q, %q", before, after)
	}
	if !stderr.waitFor("> POST "+e.base+"/mcp", "> Authorization: Bearer [REDACTED]", "> POST "+e.base+"/oauth/token", "refresh_token=[REDACTED]") {
		t.Fatalf("the trace lacks the MCP and refresh requests:\n%s", stderr.String())
	}
	trace := stderr.String()
	for name, secret := range map[string]string{"the first access token": before, "the refreshed access token": after} {
		if strings.Contains(trace, secret) {
			t.Errorf("%s is in the trace", name)
		}
	}
	if regexp.MustCompile(`refresh_token=[^\[&\s]`).MatchString(trace) || regexp.MustCompile(`"refresh_token":"[^\[]`).MatchString(trace) || strings.Contains(trace, "eyJ") {
		t.Errorf("a refresh token or a JWT is in the trace:\n%s", trace)
	}
}
