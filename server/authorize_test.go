package server_test

import (
	"bytes"
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// An unknown client or a redirect URI that is not registered (including
// every near miss) gets an HTML error page and never a redirect: the server
// cannot trust where it would send the browser (decisions.md).
func TestAuthorizeUntrustedRedirectShowsPage(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env) // http://127.0.0.1:9999/callback
	b := env.Browser("pat")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	set := func(k, v string) url.Values { return url.Values{k: {v}} }
	for _, tt := range []struct {
		name   string
		extra  url.Values // replaces parameters of a valid request; an empty list removes one
		repeat string     // appended raw to the query
	}{
		{"unknown client", set("client_id", "nobody"), ""},
		{"missing client_id", url.Values{"client_id": nil}, ""},
		{"missing redirect_uri", url.Values{"redirect_uri": nil}, ""},
		{"other path", set("redirect_uri", "http://127.0.0.1:9999/other"), ""},
		{"trailing slash", set("redirect_uri", "http://127.0.0.1:9999/callback/"), ""},
		{"extra query", set("redirect_uri", "http://127.0.0.1:9999/callback?x=1"), ""},
		{"empty query", set("redirect_uri", "http://127.0.0.1:9999/callback?"), ""},
		{"fragment", set("redirect_uri", "http://127.0.0.1:9999/callback#x"), ""},
		{"empty fragment", set("redirect_uri", "http://127.0.0.1:9999/callback#"), ""},
		{"escaped path", set("redirect_uri", "http://127.0.0.1:9999/%63allback"), ""},
		{"https instead of http", set("redirect_uri", "https://127.0.0.1:9999/callback"), ""},
		{"other host", set("redirect_uri", "http://evil.example/callback"), ""},
		{"other loopback address", set("redirect_uri", "http://127.0.0.2:9999/callback"), ""},
		{"user info before another host", set("redirect_uri", "http://127.0.0.1@evil.example/"), ""},
		{"user info before the host", set("redirect_uri", "http://u@127.0.0.1:9999/callback"), ""},
		{"localhost for 127.0.0.1", set("redirect_uri", "http://localhost:9999/callback"), ""},
		{"port out of range", set("redirect_uri", "http://127.0.0.1:70000/callback"), ""},
		{"port zero", set("redirect_uri", "http://127.0.0.1:0/callback"), ""},
		{"repeated client_id", nil, "&client_id=" + c.ID},
		{"repeated redirect_uri", nil, "&redirect_uri=" + url.QueryEscape(c.RedirectURI)},
		{"bad redirect and bad PKCE", url.Values{"redirect_uri": {"http://evil.example/cb"}, "code_challenge": nil}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := c.authURL(tt.extra)
			u += tt.repeat
			// Signed in or not, the answer is the same page.
			resp, body := do(t, http.MethodGet, u, "", "", nil)
			htmlPage(t, resp, body, http.StatusBadRequest)
			page, err := b.Get(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			if page.Status != http.StatusBadRequest || page.URL.String() != u || bytes.Contains(page.Body, []byte(`name="csrf_token"`)) {
				t.Fatalf("signed in: status %d at %s, want the 400 error page without a consent form", page.Status, page.URL)
			}
		})
	}
}

// A loopback IP redirect URI matches on any port (RFC 8252 §7.3); the code
// is then bound to the URI actually used. A localhost URI, not an IP
// literal, matches exactly.
func TestAuthorizeLoopbackPortVariance(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	v6 := &testClient{t: t, env: env, RedirectURI: "http://[::1]:8080/cb", ID: registerMeta(t, env, map[string]any{"redirect_uris": []string{"http://[::1]:8080/cb"}})}
	lh := &testClient{t: t, env: env, RedirectURI: "http://localhost:8080/cb", ID: registerMeta(t, env, map[string]any{"redirect_uris": []string{"http://localhost:8080/cb"}})}
	for _, tt := range []struct {
		c        *testClient
		redirect string
		ok       bool
	}{
		{c, "http://127.0.0.1:1/callback", true},
		{c, "http://127.0.0.1:54321/callback", true},
		{c, "http://127.0.0.1:65535/callback", true},
		{c, "http://127.0.0.1/callback", true},
		{v6, "http://[::1]:5555/cb", true},
		{v6, "http://[::1]/cb", true},
		{lh, "http://localhost:8080/cb", true},
		{lh, "http://localhost:8081/cb", false},
	} {
		u, _ := tt.c.authURL(url.Values{"redirect_uri": {tt.redirect}})
		resp, body := do(t, http.MethodGet, u, "", "", nil)
		if tt.ok && (resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/auth/login?")) {
			t.Errorf("%s: %d %q, want a redirect to sign-in", tt.redirect, resp.StatusCode, resp.Header.Get("Location"))
		}
		if !tt.ok && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want the 400 page: %.200s", tt.redirect, resp.StatusCode, body)
		}
	}

	// Through consent on another port: the browser goes back to that port,
	// and the code exchanges only with that exact redirect_uri.
	other := &testClient{t: t, env: env, ID: c.ID, RedirectURI: "http://127.0.0.1:41000/callback"}
	code, verifier := other.code(env.Browser("port"))
	resp, body := c.exchange(code, verifier) // registered port 9999
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = other.exchange(code, verifier)
	mustToken(t, resp, body)
}

// Every other authorization error goes back to the (trusted) redirect URI
// with error, error_description, the state and the issuer (RFC 9207), signed
// in or not, and carries no code.
func TestAuthorizeErrorsRedirect(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("rex")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	set := func(k, v string) url.Values { return url.Values{k: {v}} }
	for _, tt := range []struct {
		name   string
		extra  url.Values
		repeat string // appended raw to the query
		code   string
	}{
		{"missing code_challenge", url.Values{"code_challenge": nil}, "", "invalid_request"},
		{"missing code_challenge_method", url.Values{"code_challenge_method": nil}, "", "invalid_request"},
		{"plain", set("code_challenge_method", "plain"), "", "invalid_request"},
		{"lower-case s256", set("code_challenge_method", "s256"), "", "invalid_request"},
		{"challenge too short", set("code_challenge", "abc"), "", "invalid_request"},
		{"challenge not base64url", set("code_challenge", strings.Repeat("+", 43)), "", "invalid_request"},
		{"challenge too long", set("code_challenge", strings.Repeat("A", 44)), "", "invalid_request"},
		{"response_type token", set("response_type", "token"), "", "unsupported_response_type"},
		{"response_type missing", url.Values{"response_type": nil}, "", "invalid_request"},
		{"response_type empty", set("response_type", ""), "", "invalid_request"},
		{"response_type code token", set("response_type", "code token"), "", "unsupported_response_type"},
		{"scope admin", set("scope", "admin"), "", "invalid_scope"},
		{"scope mcp plus more", set("scope", "mcp admin"), "", "invalid_scope"},
		{"offline_access plus more", set("scope", "mcp offline_access admin"), "", "invalid_scope"},
		{"resource elsewhere", set("resource", "https://other.example/mcp"), "", "invalid_target"},
		{"resource a sub-path", set("resource", env.URL+"/mcp/x"), "", "invalid_target"},
		{"repeated scope", nil, "&scope=mcp", "invalid_request"},
		{"repeated code_challenge", nil, "&code_challenge=" + pkce.S256(strings.Repeat("v", 43)), "invalid_request"},
		{"invalid UTF-8", nil, "&nonce=%ff", "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := c.authURL(tt.extra)
			u += tt.repeat
			for _, client := range []*http.Client{noRedirects, noFollow(b)} {
				resp, err := client.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusFound {
					t.Fatalf("status %d, want 302", resp.StatusCode)
				}
				loc, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != c.RedirectURI {
					t.Fatalf("Location %q, want the registered redirect URI", resp.Header.Get("Location"))
				}
				q := loc.Query()
				if q.Get("error") != tt.code || q.Get("error_description") == "" || q.Get("state") != "st-123" || q.Get("iss") != env.URL || q.Has("code") {
					t.Fatalf("redirect query %v, want error=%s with error_description, state st-123, iss %s and no code", q, tt.code, env.URL)
				}
			}
		})
	}

	// Valid variations go on to sign-in: scope omitted means mcp, and the
	// resource may name the MCP endpoint or the server.
	for _, extra := range []url.Values{
		{"scope": nil}, {"resource": {env.URL + "/mcp"}}, {"resource": {env.URL}}, {"state": nil},
		{"scope": {"mcp offline_access"}}, {"scope": {"offline_access mcp"}},
	} {
		u, _ := c.authURL(extra)
		resp, _ := do(t, http.MethodGet, u, "", "", nil)
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/auth/login?") {
			t.Errorf("%v: %d %q, want a redirect to sign-in", extra, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// Without a session the request goes to /auth/login and, after sign-in,
// back to the same authorization request: the consent page, which names
// the client (escaped) and the redirect host and cannot be framed.
func TestAuthorizeSignInThenConsent(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	const name = `<script>alert(1)</script> Tools & Co`
	c := &testClient{t: t, env: env, RedirectURI: "http://127.0.0.1:7777/cb"}
	c.ID = registerMeta(t, env, map[string]any{"client_name": name, "redirect_uris": []string{c.RedirectURI}})
	authURL, _ := c.authURL(nil)
	requestURI := strings.TrimPrefix(authURL, env.URL)

	resp, _ := do(t, http.MethodGet, authURL, "", "", nil)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Path != "/auth/login" || loc.Query().Get("return_to") != requestURI {
		t.Fatalf("not signed in: %d Location %q, want /auth/login?return_to=%s", resp.StatusCode, resp.Header.Get("Location"), requestURI)
	}

	b := env.Browser("quinn")
	page, err := b.Get(context.Background(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	if page.Status != http.StatusOK || page.URL.String() != authURL {
		t.Fatalf("after sign-in: status %d at %s, want the consent page at %s", page.Status, page.URL, authURL)
	}
	for _, want := range []string{html.EscapeString(name), `id="redirect-host">127.0.0.1:7777<`, `name="csrf_token"`, `value="approve"`, `value="deny"`} {
		if !bytes.Contains(page.Body, []byte(want)) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if bytes.Contains(page.Body, []byte("<script>")) {
		t.Error("consent page contains the client name unescaped")
	}
	h := page.Header
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q lacks frame-ancestors 'none'", csp)
	}
	if h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("X-Frame-Options %q, Cache-Control %q; want DENY, no-store", h.Get("X-Frame-Options"), h.Get("Cache-Control"))
	}
}

// Deny sends access_denied with the state back to the client; no code is
// issued.
func TestConsentDeny(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	c := register(t, env)
	b := env.Browser("dana")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := cs.writes.Load()
	u, _ := c.authURL(nil)
	back, err := b.Consent(context.Background(), u, "deny")
	if err != nil {
		t.Fatal(err)
	}
	q := back.Query()
	if back.Scheme+"://"+back.Host+back.Path != c.RedirectURI || q.Get("error") != "access_denied" || q.Get("state") != "st-123" || q.Get("iss") != env.URL || q.Has("code") {
		t.Fatalf("deny redirected to %s, want %s?error=access_denied&state=st-123&iss=...", back, c.RedirectURI)
	}
	if n := cs.writes.Load() - before; n != 0 {
		t.Fatalf("denial stored %d records", n)
	}
}

// The decision POST needs the session's CSRF token: missing, wrong, or
// another session's token is a 403 page and no code. With the right token
// the parameters are validated again, so a tampered redirect_uri never
// gets a redirect.
func TestConsentCSRF(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	c := register(t, env)
	alice, bob := env.Browser("alice"), env.Browser("bob")
	aliceCSRF, bobCSRF := csrfToken(t, env, alice), csrfToken(t, env, bob)
	if aliceCSRF == bobCSRF {
		t.Fatal("two sessions share a CSRF token")
	}
	u, _ := c.authURL(nil)
	parsed, _ := url.Parse(u)
	form := func(csrf string, edits url.Values) url.Values {
		f := parsed.Query()
		f.Set("action", "approve")
		if csrf != "" {
			f.Set("csrf_token", csrf)
		}
		for k, v := range edits {
			f[k] = v
		}
		return f
	}
	for _, tt := range []struct {
		name   string
		form   url.Values
		status int
	}{
		{"no token", form("", nil), http.StatusForbidden},
		{"wrong token", form("AAAA"+aliceCSRF[4:], nil), http.StatusForbidden},
		{"another session's token", form(bobCSRF, nil), http.StatusForbidden},
		{"tampered redirect_uri", form(aliceCSRF, url.Values{"redirect_uri": {"http://evil.example/cb"}}), http.StatusBadRequest},
		{"unknown client", form(aliceCSRF, url.Values{"client_id": {"nobody"}}), http.StatusBadRequest},
		{"unknown action", form(aliceCSRF, url.Values{"action": {"maybe"}}), http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			resp, body := browserPost(t, alice, env.URL+"/oauth/authorize", tt.form)
			htmlPage(t, resp, body, tt.status)
			if n := cs.writes.Load() - before; n != 0 {
				t.Fatalf("refused decision stored %d records", n)
			}
		})
	}

	// Without a session at all: a page, no code.
	before := cs.writes.Load()
	resp, body := do(t, http.MethodPost, env.URL+"/oauth/authorize", "application/x-www-form-urlencoded", form(aliceCSRF, nil).Encode(), nil)
	htmlPage(t, resp, body, http.StatusUnauthorized)
	if n := cs.writes.Load() - before; n != 0 {
		t.Fatalf("decision without a session stored %d records", n)
	}

	// The same form with the right token does issue a code: the refusals
	// above were about the token.
	resp, body = browserPost(t, alice, env.URL+"/oauth/authorize", form(aliceCSRF, nil))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("approve with the right token: %d %q: %.200s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
}
