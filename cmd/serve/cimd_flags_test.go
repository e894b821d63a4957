package serve_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// parsedOptions is what serve would run with, given args and env.
func parsedOptions(t *testing.T, args []string, env map[string]string) *serve.Options {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
	var got *serve.Options
	cmd := serve.NewCmd(f, func(_ context.Context, o *serve.Options) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v %v: %v", args, env, err)
	}
	return got
}

// --cimd-allow-private is off by default and set by the flag or by
// MCPAUTH_CIMD_ALLOW_PRIVATE.
func TestCIMDAllowPrivateFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, false},
		{[]string{"--cimd-allow-private"}, nil, true},
		{nil, map[string]string{"MCPAUTH_CIMD_ALLOW_PRIVATE": "true"}, true},
	} {
		got := parsedOptions(t, tt.args, tt.env)
		if got.CIMDAllowPrivate != tt.want {
			t.Errorf("%v %v: CIMDAllowPrivate = %v, want %v", tt.args, tt.env, got.CIMDAllowPrivate, tt.want)
		}
	}
}

// --cimd-max-fetches and --cimd-failure-cache default to 8 and 60 s (as the
// README says), and are set by the flags or their environment variables;
// a negative value is refused before anything listens.
func TestCIMDBoundFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args        []string
		env         map[string]string
		wantFetches int
		wantCache   time.Duration
	}{
		{nil, nil, 8, time.Minute},
		{[]string{"--cimd-max-fetches", "3", "--cimd-failure-cache", "5m"}, nil, 3, 5 * time.Minute},
		{nil, map[string]string{"MCPAUTH_CIMD_MAX_FETCHES": "16", "MCPAUTH_CIMD_FAILURE_CACHE": "30s"}, 16, 30 * time.Second},
	} {
		got := parsedOptions(t, tt.args, tt.env)
		if got.CIMDMaxFetches != tt.wantFetches || got.CIMDFailureCache != tt.wantCache {
			t.Errorf("%v %v: max fetches %d, failure cache %s; want %d, %s", tt.args, tt.env, got.CIMDMaxFetches, got.CIMDFailureCache, tt.wantFetches, tt.wantCache)
		}
	}
	ios, _, _, _ := iostreams.Test()
	cmd := serve.NewCmd(&cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }}, nil)
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--cimd-max-fetches", "-1"})
	if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "--cimd-max-fetches") {
		t.Fatalf("--cimd-max-fetches -1: %v; want an error naming the flag", err)
	}
}

// Through mcpauth serve, flags as on the command line: a failing document
// is fetched once per --cimd-failure-cache (10 minutes on the test clock,
// not the default 60 s) however often it is named, and distinct URLs from
// one address are fetched only within --limits cimd.
// The document host's certificate is one serve does not trust, so every
// fetch fails after its connection, which the host counts.
func TestCIMDBoundsThroughServe(t *testing.T) {
	var conns atomic.Int64
	host := httptest.NewUnstartedServer(http.NotFoundHandler())
	host.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes serve refuses
	host.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	host.StartTLS()
	defer host.Close()
	base, _ := startServe(t, nil, "--test-clock", "--cimd-allow-private", "--cimd-failure-cache", "10m", "--limits", "cimd=0.01:3")
	name := func(clientID string) int {
		resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"token": {"x"}, "client_id": {clientID}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 20 {
		if got := name(host.URL + "/failing.json"); got != http.StatusUnauthorized {
			t.Fatalf("a failing document: HTTP %d, want 401", got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("one failing URL named 20 times: %d connections to its host, want 1", n)
	}
	want := []int{http.StatusUnauthorized, http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusTooManyRequests}
	for i, w := range want {
		if got := name(fmt.Sprintf("%s/distinct/%d.json", host.URL, i)); got != w {
			t.Fatalf("distinct URL %d: HTTP %d, want %d", i, got, w)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections in all, want 3: the cimd burst", n)
	}
	// The budget refills meanwhile (0.01/s); the failure is still known
	// after 2 minutes, and forgotten after 11.
	for _, step := range []struct {
		advance string
		conns   int64
	}{{"2m", 3}, {"9m", 4}} {
		if got := status(t, http.MethodPost, base+"/api/test/clock", `{"advance":"`+step.advance+`"}`); got != http.StatusOK {
			t.Fatalf("moving the test clock: HTTP %d", got)
		}
		name(host.URL + "/failing.json")
		if n := conns.Load(); n != step.conns {
			t.Fatalf("after %s more: %d connections in all, want %d", step.advance, n, step.conns)
		}
	}
}
