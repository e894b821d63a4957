package serve_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/internal/iostreams"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// startServe runs `mcpauth serve args…` in-process, flags and environment
// parsed as on the command line, and returns its base URL and output.
func startServe(t *testing.T, env map[string]string, args ...string) (string, *clitest.Buffer) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	out := &clitest.Buffer{}
	ios.ErrOut = out
	f := cmdutil.New(ios, func(k string) string { return env[k] })
	ready, done := make(chan string, 1), make(chan error, 1)
	ctx, stop := context.WithCancel(context.Background())
	cmd := serve.NewCmd(f, func(ctx context.Context, o *serve.Options) error {
		o.Ready = func(base string) { ready <- base }
		return serve.Run(ctx, o)
	})
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "mcpauth.db"), "--log-level", "error"}, args...))
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case base := <-ready:
		return base, out
	case err := <-done:
		t.Fatalf("serve did not start: %v\n%s", err, out)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start within 30 s:\n%s", out)
	}
	return "", nil
}

func status(t *testing.T, method, u, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// MCPAUTH_METRICS_ADDR (as --metrics-addr) serves the metrics on their own
// listener, and they count what the main listener answered.
func TestMetricsAddr(t *testing.T) {
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base, out := startServe(t, map[string]string{"MCPAUTH_METRICS_ADDR": metricsAddr}, "--limits", "register=0.001:1")
	scrapeURL := "http://" + metricsAddr + "/metrics"
	if !strings.Contains(out.String(), "metrics:      "+scrapeURL) {
		t.Errorf("output does not name the metrics URL %s:\n%s", scrapeURL, out)
	}
	reg := `{"redirect_uris":["http://127.0.0.1:9999/cb"]}`
	for _, want := range []int{http.StatusCreated, http.StatusTooManyRequests} {
		if got := status(t, "POST", base+"/oauth/register", reg); got != want {
			t.Fatalf("register: HTTP %d, want %d", got, want)
		}
	}
	if got := status(t, "GET", base+"/metrics", ""); got != http.StatusNotFound {
		t.Errorf("/metrics on the main listener: HTTP %d, want 404", got)
	}
	s := servertest.ScrapeMetrics(t, scrapeURL)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/register", "code": "201"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/register", "code": "429"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "/", "code": "404"}, 1)
	s.Check(t, "mcpauth_rate_limited_total", map[string]string{"limiter": "register"}, 1)
	s.Check(t, "mcpauth_store_operation_duration_seconds", map[string]string{"op": "CreateClient"}, 1)
	if got := status(t, "GET", "http://"+metricsAddr+"/api/ping", ""); got != http.StatusNotFound {
		t.Errorf("the metrics listener serves more than /metrics: /api/ping is HTTP %d", got)
	}
}

// Without --metrics-addr no metrics are served: none on the main listener,
// no metrics URL announced.
func TestMetricsOffByDefault(t *testing.T) {
	base, out := startServe(t, nil)
	if strings.Contains(out.String(), "metrics") {
		t.Errorf("output mentions metrics without --metrics-addr:\n%s", out)
	}
	if got := status(t, "GET", base+"/metrics", ""); got != http.StatusNotFound {
		t.Errorf("/metrics on the main listener: HTTP %d, want 404", got)
	}
}

// A metrics address that cannot be had stops the server at start, saying
// which flag to change.
func TestMetricsAddrInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ios, _, _, _ := iostreams.Test()
	err = serve.Run(t.Context(), &serve.Options{
		IO: ios, Getenv: func(string) string { return "" }, Addr: "127.0.0.1:0", DevIdPAddr: "127.0.0.1:0",
		DB: filepath.Join(t.TempDir(), "mcpauth.db"), LogFormat: "text", LogLevel: "error", MetricsAddr: taken.Addr().String(),
	})
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("serve with a taken metrics address: %v; want an error naming --metrics-addr", err)
	}
}

// --gc-interval paces the garbage collection: at 50 ms it runs several
// times within a second (the default would not run once). A negative one is
// refused before anything starts.
func TestGCInterval(t *testing.T) {
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startServe(t, nil, "--metrics-addr", metricsAddr, "--gc-interval", "50ms")
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := servertest.ScrapeMetrics(t, "http://"+metricsAddr+"/metrics")
		if n, _ := s.Value("mcpauth_store_operation_duration_seconds", map[string]string{"op": "GC"}); n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 garbage collections within 10 s at --gc-interval 50ms")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ios, _, _, _ := iostreams.Test()
	err := serve.Run(t.Context(), &serve.Options{IO: ios, Getenv: func(string) string { return "" }, Addr: "127.0.0.1:0",
		DB: filepath.Join(t.TempDir(), "mcpauth.db"), LogFormat: "text", LogLevel: "error", GCInterval: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "--gc-interval") {
		t.Fatalf("serve with a negative --gc-interval: %v; want an error naming it", err)
	}
}
