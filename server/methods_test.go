package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
)

// A known path asked with a method it does not serve gets 405 with Allow:
// an RFC 6749-shaped JSON body on API and OAuth paths, the HTML error page
// on browser pages. Unknown paths stay 404.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	for _, tt := range []struct {
		method, path, allow string
		json                bool
	}{
		{"GET", "/oauth/token", "POST", true},
		{"HEAD", "/oauth/token", "POST", true},
		{"PUT", "/oauth/token", "POST", true},
		{"GET", "/oauth/revoke", "POST", true},
		{"GET", "/oauth/register", "POST", true},
		{"DELETE", "/oauth/authorize", "GET, HEAD, POST", true},
		{"GET", "/api/oauth/device/code", "POST", true},
		{"GET", "/api/oauth/device/token", "POST", true},
		{"POST", "/api/ping", "GET, HEAD", true},
		{"POST", "/.well-known/oauth-authorization-server", "GET, HEAD", true},
		{"DELETE", "/.well-known/oauth-protected-resource", "GET, HEAD", true},
		{"POST", "/.well-known/oauth-protected-resource/mcp", "GET, HEAD", true},
		{"POST", "/healthz", "GET, HEAD", true},
		{"PUT", "/settings", "GET, HEAD, POST", false},
		{"PUT", "/auth/device", "GET, HEAD, POST", false},
		{"POST", "/auth/login", "GET, HEAD", false},
		{"POST", "/auth/callback", "GET, HEAD", false},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp, body := do(t, tt.method, env.URL+tt.path, "", "", nil)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status %d, want 405: %.200s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
			if tt.method == http.MethodHead {
				return // no body
			}
			if tt.json {
				oauthErr(t, resp, body, http.StatusMethodNotAllowed, "invalid_request")
			} else if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type %q, want the HTML error page", ct)
			}
		})
	}
	for _, path := range []string{"/oauth/nothing", "/api/nothing", "/api", "/.well-known/nothing", "/mcp/nothing"} {
		resp, body := do(t, http.MethodGet, env.URL+path, "", "", nil)
		oauthErr(t, resp, body, http.StatusNotFound, "not_found")
	}
	// A person with a stale link gets a page.
	for _, path := range []string{"/nothing", "/auth/nothing", "/settings/x", "/favicon.ico"} {
		resp, body := do(t, http.MethodGet, env.URL+path, "", "", nil)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(ct, "text/html") || !strings.Contains(string(body), "Page not found") {
			t.Fatalf("%s: %d %q; want the HTML 404 page", path, resp.StatusCode, ct)
		}
	}
	// Paths serving every method keep doing so.
	resp, body := do(t, http.MethodPut, env.URL+"/mcp", "", "", nil)
	wantChallenge(t, env, resp, body, false)
}
