package conformance

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
)

// A URL that is not an MCP server (a web site: no 401 challenge, no
// protected resource metadata) is one finding and exit 6, not a failure
// for every check; an MCP server without authorization is told apart.
func TestNotAnMCPServerIsOneFinding(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>Welcome to our shop</body></html>"))
	}))
	defer site.Close()
	res := runCmd(t, nil, nil, "--profile", "mcp", site.URL+"/mcp")
	if res.code != clierr.ExitNetwork || strings.Count(res.stderr, "not an MCP server") != 1 || strings.Contains(res.stdout, "✗") {
		t.Errorf("a web site: exit %d, want %d and one finding naming it not an MCP server\nstdout:\n%s\nstderr:\n%s",
			res.code, clierr.ExitNetwork, res.stdout, res.stderr)
	}

	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"open","version":"1"}}}`))
	}))
	defer open.Close()
	res = runCmd(t, nil, nil, "--profile", "mcp", open.URL+"/mcp")
	if res.code != clierr.ExitNetwork || !strings.Contains(res.stderr, "an MCP server without authorization") {
		t.Errorf("an MCP server without authorization: exit %d, want %d saying so\n%s", res.code, clierr.ExitNetwork, res.stderr)
	}
}
