package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// grantsHarness is a real server on a SQLite file, over loopback HTTP.
// Tests may change srv.grants before their first request: every reader of
// the registry reads it per request.
type grantsHarness struct {
	srv     *Server
	url     string
	metrics string // the metrics listener's URL
	log     syncbuf.Buffer

	mu      sync.Mutex
	reached []string // the grants whose handlers ran
}

// handlersReached returns the grants whose handlers ran since the last call.
func (h *grantsHarness) handlersReached() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.reached
	h.reached = nil
	return r
}

func newGrantsHarness(t *testing.T) *grantsHarness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "grants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &grantsHarness{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.srv.Handler().ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	m := NewMetrics()
	ms := httptest.NewServer(m.Handler())
	t.Cleanup(ms.Close)
	h.url, h.metrics = ts.URL, ms.URL
	if h.srv, err = New(ctx, Config{BaseURL: ts.URL, Store: st, SigningKey: []byte("grants-test-signing-key-0123456789abcdef"),
		Limits: Limits{Disabled: true}, Metrics: m, Logger: slog.New(slog.NewTextHandler(&h.log, nil))}); err != nil {
		t.Fatal(err)
	}
	// Each handler notes that it was reached, then does its work.
	for i := range h.srv.grants {
		g := &h.srv.grants[i]
		handle := g.handle
		g.handle = func(s *Server, w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
			h.mu.Lock()
			h.reached = append(h.reached, g.name)
			h.mu.Unlock()
			handle(s, w, r, p, g)
		}
	}
	return h
}

func (h *grantsHarness) do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s %s: HTTP %d, not JSON: %q", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return resp.StatusCode, v
}

func (h *grantsHarness) metadata(t *testing.T) (grants, responseTypes []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.url+"/.well-known/oauth-authorization-server", nil)
	code, v := h.do(t, req)
	if code != 200 {
		t.Fatalf("metadata: HTTP %d", code)
	}
	return stringList(v["grant_types_supported"]), stringList(v["response_types_supported"])
}

// register posts client metadata with grants and returns the status and body.
func (h *grantsHarness) register(t *testing.T, grants ...string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"grant_types": grants, "redirect_uris": []string{"http://127.0.0.1:9/cb"}, "scope": "mcp offline_access"})
	req, _ := http.NewRequest("POST", h.url+"/oauth/register", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	return h.do(t, req)
}

func (h *grantsHarness) token(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", h.url+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return h.do(t, req)
}

func stringList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// withStarter is grants plus, for the refresh grant, the grants that can
// start its family: registration refuses refresh_token alone.
func withStarter(reg grantRegistry, g grantType) []string {
	if g.name != grantRefresh {
		return []string{g.name}
	}
	out := []string{g.name}
	for _, o := range reg {
		if o.issuesRefresh && o.name != grantRefresh {
			out = append(out, o.name)
		}
	}
	return out
}

// TestGrantRegistryAgrees: for every registered grant, the metadata
// advertises it, registration and metadata documents accept it, and the
// token endpoint hands it to its own handler; a grant not registered is
// refused in all of them.
func TestGrantRegistryAgrees(t *testing.T) {
	h := newGrantsHarness(t)
	reg := h.srv.grants
	if len(reg) == 0 {
		t.Fatal("the registry is empty")
	}
	const unknown = "urn:example:params:oauth:grant-type:unregistered"

	grants, responseTypes := h.metadata(t)
	var wantRT []string
	for _, g := range reg {
		if g.responseType != "" && !slices.Contains(wantRT, g.responseType) {
			wantRT = append(wantRT, g.responseType)
		}
	}
	if !slices.Equal(grants, reg.names()) || !slices.Equal(responseTypes, wantRT) {
		t.Errorf("metadata: grant_types_supported %v, response_types_supported %v; want %v, %v", grants, responseTypes, reg.names(), wantRT)
	}

	all := reg.names()
	code, client := h.register(t, all...)
	if code != 201 {
		t.Fatalf("registering every grant: HTTP %d %v", code, client)
	}
	for _, g := range reg {
		t.Run(g.label, func(t *testing.T) {
			code, v := h.register(t, withStarter(reg, g)...)
			if code != 201 || !slices.Contains(stringList(v["grant_types"]), g.name) {
				t.Errorf("registration: HTTP %d %v; want 201 with %s", code, v, g.name)
			}
			if rt := stringList(v["response_types"]); g.responseType != "" && !slices.Contains(rt, g.responseType) {
				t.Errorf("registration: response_types %v lack %q", rt, g.responseType)
			}

			h.handlersReached()
			code, v = h.token(t, url.Values{"grant_type": {g.name}, "client_id": {client["client_id"].(string)}})
			if reached := h.handlersReached(); !slices.Equal(reached, []string{g.name}) || v["error"] == errUnsupportedGrantType || code != 400 && code != 401 {
				t.Errorf("token endpoint: HTTP %d %v, handlers reached %v; want the %s handler's own refusal", code, v, reached, g.name)
			}
		})
	}

	if code, v := h.register(t, grantAuthCode, unknown); code != 400 || v["error"] != errInvalidClientMetadata {
		t.Errorf("registering %s: HTTP %d %v; want 400 invalid_client_metadata", unknown, code, v)
	}
	for _, name := range []string{unknown, "password", "client_credentials"} {
		code, v := h.token(t, url.Values{"grant_type": {name}, "client_id": {client["client_id"].(string)}})
		want := "supported grant types: " + strings.Join(all, ", ")
		if reached := h.handlersReached(); code != 400 || v["error"] != errUnsupportedGrantType || v["error_description"] != want || len(reached) != 0 {
			t.Errorf("token endpoint, %s: HTTP %d %v, handlers reached %v; want 400 unsupported_grant_type %q", name, code, v, reached, want)
		}
	}

	// A metadata document keeps exactly the registered grants it lists.
	id := "https://client.example/app"
	doc, _ := json.Marshal(map[string]any{"client_id": id, "redirect_uris": []string{"http://127.0.0.1/cb"}, "grant_types": append([]string{unknown}, all...)})
	c, err := parseMetadataDocument(reg, id, doc)
	if err != nil || !slices.Equal(c.GrantTypes, all) || !slices.Equal(c.ResponseTypes, wantRT) {
		t.Errorf("metadata document: grants %v, response types %v, err %v; want %v, %v", c.GrantTypes, c.ResponseTypes, err, all, wantRT)
	}
}

// TestAddingAGrant: one registry entry and its handler make a grant
// advertised, registrable and served, with the common tail's token,
// refresh family, count and log line; a grant for confidential clients is
// advertised but neither registered nor taken from metadata documents,
// since every client here is public.
func TestAddingAGrant(t *testing.T) {
	h := newGrantsHarness(t)
	const (
		name         = "urn:example:params:oauth:grant-type:test"
		confidential = "urn:example:params:oauth:grant-type:confidential"
	)
	// The handler of a grant that gives any known client a token for u_test.
	handle := func(s *Server, w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
		c, ok := s.knownClient(w, r, p["client_id"])
		if ok {
			s.issue(w, r, g, &issuance{userID: "u_test", clientID: c.ID, client: c, scope: "mcp offline_access"})
		}
	}
	h.srv.grants = append(h.srv.grants,
		grantType{name: name, label: "test", handle: handle, clients: publicClients, issuesRefresh: true},
		grantType{name: confidential, label: "confidential", handle: handle, clients: confidentialClients})

	grants, _ := h.metadata(t)
	if !slices.Contains(grants, name) || !slices.Contains(grants, confidential) {
		t.Errorf("grant_types_supported %v lacks the new grants", grants)
	}
	code, client := h.register(t, name, grantRefresh)
	if code != 201 {
		t.Fatalf("registering the new grant with refresh_token: HTTP %d %v", code, client)
	}
	if code, v := h.register(t, grantRefresh); code != 400 || !strings.Contains(v["error_description"].(string), "test grant") {
		t.Errorf("refresh_token alone: HTTP %d %v; want 400 naming the new grant among those that start a family", code, v)
	}
	if code, v := h.register(t, confidential); code != 400 || v["error"] != errInvalidClientMetadata {
		t.Errorf("registering a confidential clients' grant: HTTP %d %v; want 400 invalid_client_metadata", code, v)
	}

	code, tok := h.token(t, url.Values{"grant_type": {name}, "client_id": {client["client_id"].(string)}})
	if code != 200 || tok["token_type"] != "Bearer" || tok["scope"] != "mcp offline_access" || tok["refresh_token"] == nil {
		t.Fatalf("the new grant: HTTP %d %v; want a Bearer token with a refresh token", code, tok)
	}
	req, _ := http.NewRequest("GET", h.url+"/api/ping", nil)
	req.Header.Set("Authorization", "Bearer "+tok["access_token"].(string))
	if code, v := h.do(t, req); code != 200 || v["user_id"] != "u_test" {
		t.Errorf("ping with the new grant's token: HTTP %d %v", code, v)
	}
	code, v := h.token(t, url.Values{"grant_type": {grantRefresh}, "client_id": {client["client_id"].(string)}, "refresh_token": {tok["refresh_token"].(string)}})
	if code != 200 || v["refresh_token"] == nil || v["refresh_token"] == tok["refresh_token"] {
		t.Errorf("refreshing the new grant's family: HTTP %d %v", code, v)
	}

	resp, err := http.Get(h.metrics)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{`mcpauth_tokens_issued_total{grant="test"} 1`, `mcpauth_tokens_issued_total{grant="refresh_token"} 1`} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}

	if log := h.log.String(); !strings.Contains(log, `msg="access token issued"`) || !strings.Contains(log, "grant=test user_id=u_test") ||
		strings.Contains(log, tok["access_token"].(string)) || strings.Contains(log, tok["refresh_token"].(string)) {
		t.Errorf("the log lacks the new grant's line, or holds its tokens:\n%s", log)
	}

	id := "https://client.example/app"
	doc, _ := json.Marshal(map[string]any{"client_id": id, "redirect_uris": []string{"http://127.0.0.1/cb"}, "grant_types": []string{confidential, name}})
	if c, err := parseMetadataDocument(h.srv.grants, id, doc); err != nil || !slices.Equal(c.GrantTypes, []string{name}) {
		t.Errorf("metadata document: grants %v, err %v; want [%s]", c.GrantTypes, err, name)
	}
}
