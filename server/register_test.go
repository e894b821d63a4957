package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

type registration struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientIDIssuedAt        *int64   `json:"client_id_issued_at"`
}

// Good registrations get 201 with every field decisions.md lists, and the
// client they create works: its redirect URI is accepted at the
// authorization endpoint, or (device-only) it can ask for a device code.
func TestRegisterAccepts(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	authCode := []string{"authorization_code"}
	both := []string{"authorization_code", deviceGrant}
	for _, tt := range []struct {
		name                 string
		meta                 map[string]any
		wantName             string
		wantURIs, wantGrants []string
		wantResponses        []string
	}{
		{"device only, no redirect_uris", map[string]any{"client_name": "Headless", "grant_types": []string{deviceGrant}},
			"Headless", []string{}, []string{deviceGrant}, []string{}},
		{"private-use scheme", map[string]any{"redirect_uris": []string{"com.example.app:/cb"}},
			"", []string{"com.example.app:/cb"}, authCode, []string{"code"}},
		{"https", map[string]any{"client_name": "Web", "redirect_uris": []string{"https://client.example.com/cb"}},
			"Web", []string{"https://client.example.com/cb"}, authCode, []string{"code"}},
		{"http 127.0.0.1", map[string]any{"redirect_uris": []string{"http://127.0.0.1/callback"}},
			"", []string{"http://127.0.0.1/callback"}, authCode, []string{"code"}},
		{"http [::1] with port", map[string]any{"redirect_uris": []string{"http://[::1]:8080/callback"}},
			"", []string{"http://[::1]:8080/callback"}, authCode, []string{"code"}},
		{"http localhost", map[string]any{"redirect_uris": []string{"http://localhost:3000/cb"}},
			"", []string{"http://localhost:3000/cb"}, authCode, []string{"code"}},
		{"scope mcp, both grants", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}, "scope": "mcp", "grant_types": both, "response_types": []string{"code"}},
			"", []string{"http://127.0.0.1/cb"}, both, []string{"code"}},
		{"unknown fields ignored (RFC 7591 §2)", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "logo_uri": "https://c.example/l.png", "software_id": 7},
			"", []string{"https://c.example/cb"}, authCode, []string{"code"}},
		{"null fields are absent", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "client_name": nil, "scope": nil},
			"", []string{"https://c.example/cb"}, authCode, []string{"code"}},
		{"token_endpoint_auth_method none", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "token_endpoint_auth_method": "none"},
			"", []string{"https://c.example/cb"}, authCode, []string{"code"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postJSON(t, env.URL+"/oauth/register", tt.meta)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", resp.StatusCode, body)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			var got registration
			mustJSON(t, body, &got)
			switch {
			case got.ClientID == "":
				t.Fatalf("no client_id: %s", body)
			case got.ClientName != tt.wantName:
				t.Fatalf("client_name %q, want %q", got.ClientName, tt.wantName)
			case got.RedirectURIs == nil || !slices.Equal(got.RedirectURIs, tt.wantURIs):
				t.Fatalf("redirect_uris %q, want %q", got.RedirectURIs, tt.wantURIs)
			case !slices.Equal(got.GrantTypes, tt.wantGrants):
				t.Fatalf("grant_types %q, want %q", got.GrantTypes, tt.wantGrants)
			case got.ResponseTypes == nil || !slices.Equal(got.ResponseTypes, tt.wantResponses):
				t.Fatalf("response_types %q, want %q", got.ResponseTypes, tt.wantResponses)
			case got.TokenEndpointAuthMethod != "none":
				t.Fatalf("token_endpoint_auth_method %q, want none", got.TokenEndpointAuthMethod)
			case got.ClientIDIssuedAt == nil || *got.ClientIDIssuedAt != servertest.Start.Unix():
				t.Fatalf("client_id_issued_at %v, want %d (the fake clock)", got.ClientIDIssuedAt, servertest.Start.Unix())
			}

			if len(tt.wantURIs) == 0 {
				requestDeviceCode(t, env, got.ClientID)
				return
			}
			// A valid request for the registered URI goes on to sign-in;
			// an unregistered client would get an error page instead.
			c := &testClient{t: t, env: env, ID: got.ClientID, RedirectURI: tt.wantURIs[0]}
			u, _ := c.authURL(nil)
			resp, body = do(t, http.MethodGet, u, "", "", nil)
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/auth/login?") {
				t.Fatalf("authorize with the registered redirect: %d Location %q: %.200s", resp.StatusCode, loc, body)
			}
		})
	}
}

// Bad registrations get the error code decisions.md names, with status 400,
// and store nothing.
func TestRegisterRejects(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	const (
		badURI  = "invalid_redirect_uri"
		badMeta = "invalid_client_metadata"
	)
	uris := func(u ...string) string {
		q := make([]string, len(u))
		for i, v := range u {
			q[i] = fmt.Sprintf("%q", v)
		}
		return `{"client_name":"x","redirect_uris":[` + strings.Join(q, ",") + `]}`
	}
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf("https://c.example/cb%d", i)
	}
	long := "https://c.example/" + strings.Repeat("a", 2000)
	for _, tt := range []struct {
		name, body string
		code       string
	}{
		{"missing redirect_uris", `{"client_name":"x"}`, badURI},
		{"empty redirect_uris", `{"redirect_uris":[]}`, badURI},
		{"authorization_code without redirect_uris", `{"grant_types":["authorization_code","` + deviceGrant + `"]}`, badURI},
		{"http on a public host", uris("http://client.example.com/cb"), badURI},
		{"http on a host that starts like loopback", uris("http://127.0.0.1.evil.example/cb"), badURI},
		{"http on localhost subdomain", uris("http://localhost.evil.example/cb"), badURI},
		{"fragment", uris("https://c.example/cb#frag"), badURI},
		{"empty fragment", uris("https://c.example/cb#"), badURI},
		{"relative", uris("/callback"), badURI},
		{"scheme-relative", uris("//c.example/cb"), badURI},
		{"javascript:", uris("javascript:alert(1)"), badURI},
		{"data:", uris("data:text/html,hi"), badURI},
		{"user info", uris("https://user:pw@c.example/cb"), badURI},
		{"https without host", uris("https:/cb"), badURI},
		{"space inside", uris("https://c.example/a b"), badURI},
		{"one good one bad", uris("https://c.example/cb", "http://evil.example/cb"), badURI},
		{"too many", uris(many...), badURI},
		{"too long", uris(long), badURI},
		{"redirect_uris is a string", `{"redirect_uris":"https://c.example/cb"}`, badMeta},
		{"redirect_uris holds a number", `{"redirect_uris":[1]}`, badMeta},
		{"client_name is a number", `{"client_name":42,"redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"grant_types is a string", `{"grant_types":"authorization_code","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"scope is a list", `{"scope":["mcp"],"redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"unknown grant type", `{"grant_types":["password"],"redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"implicit grant", `{"grant_types":["implicit"],"redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"response type token", `{"response_types":["token"],"redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"scope admin", `{"scope":"admin","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"scope mcp plus more", `{"scope":"mcp admin","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"client_secret_basic", `{"token_endpoint_auth_method":"client_secret_basic","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"control character in client_name", `{"client_name":"a\u0007b","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"newline in client_name", `{"client_name":"line\nbreak","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"NUL in client_name", `{"client_name":"a\u0000b","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"client_name too long", `{"client_name":"` + strings.Repeat("n", 201) + `","redirect_uris":["https://c.example/cb"]}`, badMeta},
		{"malformed JSON", `{"redirect_uris":`, "invalid_request"},
		{"JSON array", `[{"redirect_uris":["https://c.example/cb"]}]`, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			resp, body := do(t, http.MethodPost, env.URL+"/oauth/register", "application/json", tt.body, nil)
			oauthErr(t, resp, body, http.StatusBadRequest, tt.code)
			if n := cs.writes.Load() - before; n != 0 {
				t.Fatalf("a rejected registration stored %d records", n)
			}
		})
	}

	// The contract's content type only.
	form := url.Values{"redirect_uris": {"https://c.example/cb"}}.Encode()
	resp, body := do(t, http.MethodPost, env.URL+"/oauth/register", "application/x-www-form-urlencoded", form, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
}
