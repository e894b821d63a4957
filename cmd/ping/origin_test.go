package ping_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/root"
)

func runPing(t *testing.T, token string, args ...string) (int, string, string) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	f := cmdutil.New(ios, func(k string) string { return map[string]string{"MCPAUTH_TOKEN": token}[k] })
	code := root.Run(context.Background(), f, append([]string{"ping"}, args...))
	return code, out.String(), errOut.String()
}

// A 307 from the MCP server to another origin (the same host on another
// port, or another host name) is not followed: the token stays home, and
// ping exits non-zero naming the redirect instead of reporting the other
// origin's answer as ok. Both checks: /api/ping, and MCP tools/list on a
// server whose /api/ping is 404.
func TestPingRefusesCrossOriginRedirect(t *testing.T) {
	var stolen atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok","user_id":"evil"}`))
	}))
	defer other.Close()
	for _, target := range []string{other.URL, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)} {
		for _, path := range []string{"/api/ping", "/mcp"} {
			mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != path {
					http.NotFound(w, r)
					return
				}
				http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			code, stdout, stderr := runPing(t, "secret-token", mcp.URL+"/mcp")
			if code != clierr.ExitNetwork || stdout != "" || !strings.Contains(stderr, "redirected (HTTP 307) to "+target) || strings.Contains(stderr, "ok") {
				t.Errorf("redirect of %s to %s: exit %d, stdout %q, stderr %q", path, target, code, stdout, stderr)
			}
			mcp.Close()
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the other origin received %d request(s)", n)
	}
}

// Plain http to a host that is not loopback carries no credential unless
// the user says so.
func TestPingRefusesPlainHTTPOffLoopback(t *testing.T) {
	code, _, stderr := runPing(t, "secret-token", "http://mcp.example.test/mcp")
	if code != clierr.ExitUsage || !strings.Contains(stderr, "--allow-insecure-http") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
