package flows_test

// The httptest servers in these tests simulate OTHER authorization servers
// and MCP servers, of the shapes found in the wild (path-aware issuers, OIDC
// only, form-encoded errors, flaky proxies). They are hand-written stand-ins
// because the point is to cover servers that are not ours; end-to-end tests
// against the mcpauth reference server live with the conformance suite.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// newServer starts an httptest server with an empty mux; handlers are added
// by the test and may refer to the returned URL.
func newServer(t *testing.T) (*httptest.Server, *http.ServeMux) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, mux
}

// asMeta is RFC 8414 metadata for an authorization server at issuer whose
// endpoints live under base.
func asMeta(issuer, base string) map[string]any {
	return map[string]any{
		"issuer":                           issuer,
		"authorization_endpoint":           base + "/oauth/authorize",
		"token_endpoint":                   base + "/oauth/token",
		"registration_endpoint":            base + "/oauth/register",
		"device_authorization_endpoint":    base + "/api/oauth/device/code",
		"response_types_supported":         []string{"code"},
		"grant_types_supported":            []string{"authorization_code", flows.GrantTypeDeviceCode},
		"code_challenge_methods_supported": []string{"S256"},
		"scopes_supported":                 []string{"mcp"},
	}
}

func prmDoc(resource string, servers ...string) map[string]any {
	return map[string]any{"resource": resource, "authorization_servers": servers, "scopes_supported": []string{"mcp"}}
}

func serveJSON(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, v) }
}

// memCache is an in-memory RegistrationCache that counts its calls.
type memCache struct {
	mu   sync.Mutex
	m    map[[2]string]*flows.ClientInformation
	puts int
}

func (c *memCache) Get(issuer, resource string) (*flows.ClientInformation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci, ok := c.m[[2]string{issuer, resource}]
	return ci, ok
}

func (c *memCache) Put(issuer, resource string, ci *flows.ClientInformation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[2]string]*flows.ClientInformation{}
	}
	c.m[[2]string{issuer, resource}] = ci
	c.puts++
	return nil
}

func mustOrigin(t testing.TB, raw string) flows.Origin {
	t.Helper()
	o, err := flows.OriginOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
