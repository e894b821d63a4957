package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Every endpoint meets malformed, oversized, mistyped and junk input with a
// 4xx: an RFC 6749-shaped JSON error on API endpoints, an HTML page on
// browser endpoints; never a 5xx, and nothing is stored.
func TestBadInputEveryEndpoint(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	c := register(t, env)
	b := env.Browser("mallory")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", 1<<20+10)
	junk := "\x00\xff\xfe" + strings.Repeat("\u202e", 50)
	const form, js = "application/x-www-form-urlencoded", "application/json"

	type tc struct {
		name, method, path, ctype, body string
		browser                         bool // HTML answer expected
	}
	var cases []tc
	api := []struct{ path, ctype string }{
		{"/oauth/register", js}, {"/oauth/token", form},
		{"/api/oauth/device/code", js}, {"/api/oauth/device/token", js},
	}
	for _, ep := range api {
		for _, in := range []struct{ name, ctype, body string }{
			{"malformed JSON", js, `{"client_id": `},
			{"JSON array", js, `["a","b"]`},
			{"JSON with trailing data", js, `{} {}`},
			{"wrong types", js, `{"client_id": 7, "redirect_uris": "x", "grant_type": []}`},
			{"text/plain", "text/plain", "client_id=x"},
			{"no content type", "", "client_id=x"},
			{"oversized", ep.ctype, big},
			{"empty", ep.ctype, ""},
			{"repeated form params", form, "client_id=a&client_id=b&grant_type=x&grant_type=y"},
			{"NUL and invalid UTF-8", ep.ctype, junk},
			{"unknown client", form, "client_id=nobody&grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x"},
			{"huge value", form, "client_id=" + strings.Repeat("z", 100000)},
		} {
			cases = append(cases, tc{name: ep.path + " " + in.name, method: "POST", path: ep.path, ctype: in.ctype, body: in.body})
		}
	}
	for _, q := range []string{
		"", "client_id=nobody", "client_id=" + c.ID + "&redirect_uri=http://evil.example/cb",
		"client_id=" + c.ID + "&client_id=" + c.ID, "client_id=%00%ff", "client_id=" + strings.Repeat("x", 5000),
	} {
		cases = append(cases, tc{name: "/oauth/authorize ?" + truncate(q, 40), method: "GET", path: "/oauth/authorize?" + q, browser: true})
	}
	for _, p := range []string{"/oauth/authorize", "/auth/device", "/settings", "/auth/logout"} {
		for _, in := range []struct{ name, ctype, body string }{
			{"no CSRF", form, "action=approve&user_code=BCDF-1234"},
			{"JSON", js, `{"action":"approve"}`},
			{"oversized", form, big},
			{"junk", form, junk},
		} {
			cases = append(cases, tc{name: p + " " + in.name, method: "POST", path: p, ctype: in.ctype, body: in.body, browser: true})
		}
	}
	// Past the CSRF check: the same pages with this session's token and
	// bad parameters.
	csrf := csrfToken(t, env, b)
	authz := func(edit url.Values) string {
		v := url.Values{
			"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.RedirectURI}, "state": {"s"},
			"code_challenge": {pkce.S256(strings.Repeat("v", 43))}, "code_challenge_method": {"S256"},
			"action": {"approve"}, "csrf_token": {csrf},
		}
		for k, vs := range edit {
			v[k] = vs
		}
		return v.Encode()
	}
	for _, in := range []struct{ name, path, body string }{
		{"unknown client", "/oauth/authorize", authz(url.Values{"client_id": {"nobody"}})},
		{"unregistered redirect", "/oauth/authorize", authz(url.Values{"redirect_uri": {"http://evil.example/cb"}})},
		{"repeated redirect_uri", "/oauth/authorize", authz(url.Values{"redirect_uri": {c.RedirectURI, c.RedirectURI}})},
		{"invalid UTF-8 client_id", "/oauth/authorize", authz(url.Values{"client_id": {"\xff\x00"}})},
		{"no code_challenge", "/oauth/authorize", authz(url.Values{"code_challenge": nil})},
		{"huge state and no code_challenge", "/oauth/authorize", authz(url.Values{"state": {strings.Repeat("s", 64<<10)}, "code_challenge": nil})},
		{"junk user code", "/auth/device", url.Values{"csrf_token": {csrf}, "user_code": {junk}, "action": {"approve"}}.Encode()},
		{"huge user code", "/auth/device", url.Values{"csrf_token": {csrf}, "user_code": {strings.Repeat("B", 100000)}, "action": {"approve"}}.Encode()},
		{"repeated user code", "/auth/device", url.Values{"csrf_token": {csrf}, "user_code": {"BCDF-1234", "BCDF-1235"}, "action": {"approve"}}.Encode()},
		{"unknown action", "/settings", url.Values{"csrf_token": {csrf}, "action": {"delete-everything"}}.Encode()},
		{"repeated action", "/settings", url.Values{"csrf_token": {csrf}, "action": {"regenerate", "regenerate"}}.Encode()},
	} {
		cases = append(cases, tc{name: in.path + " with CSRF, " + in.name, method: "POST", path: in.path, ctype: form, body: in.body, browser: true})
	}
	cases = append(cases, tc{name: "/oauth/authorize GET huge state, no code_challenge", method: "GET", browser: true,
		path: "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.RedirectURI}, "state": {strings.Repeat("s", 64<<10)}}.Encode()})

	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			req, _ := http.NewRequest(tt.method, env.URL+tt.path, strings.NewReader(tt.body))
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			client := http.DefaultClient
			if tt.browser {
				client = b.Client // signed in: the page itself must refuse
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error string `json:"error"`
			}
			raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case resp.StatusCode >= 500:
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			case resp.StatusCode < 400 && !(tt.browser && resp.StatusCode == http.StatusFound):
				t.Fatalf("status %d accepted bad input: %s", resp.StatusCode, raw)
			}
			if tt.browser {
				if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusFound && !strings.HasPrefix(ct, "text/html") {
					t.Fatalf("browser endpoint answered %q, want an HTML page", ct)
				}
				if loc := resp.Header.Get("Location"); strings.Contains(loc, "evil.example") {
					t.Fatalf("redirected to an unregistered URI: %s", loc)
				}
			} else if json.Unmarshal(raw, &body) != nil || body.Error == "" {
				t.Fatalf("status %d without an RFC 6749 error body: %s", resp.StatusCode, raw)
			}
			if got := cs.writes.Load(); got != before {
				t.Fatalf("a rejected request stored %d records", got-before)
			}
		})
	}
}

// The test clock endpoint (only there with Config.TestClock) refuses bad
// input the same way, and a refused request never moves time.
func TestBadInputTestClock(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	tc := clock.NewOffset(nil)
	srv, err := server.New(context.Background(), server.Config{BaseURL: "http://127.0.0.1", Store: cs, TestClock: tc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	const form, js = "application/x-www-form-urlencoded", "application/json"
	for _, in := range []struct{ name, ctype, body string }{
		{"malformed JSON", js, `{"advance":`},
		{"JSON array", js, `["10m"]`},
		{"number", js, `{"advance":600}`},
		{"negative", js, `{"advance":"-1s"}`},
		{"garbage", js, `{"advance":"soon"}`},
		{"absurdly far", js, `{"advance":"100000h"}`},
		{"empty", js, ""},
		{"no content type", "", `{"advance":"1s"}`},
		{"text/plain", "text/plain", `{"advance":"1s"}`},
		{"repeated", form, "advance=1s&advance=2s"},
		{"NUL and invalid UTF-8", form, "advance=1s%00%ff"},
		{"oversized", js, `{"advance":"1s","pad":"` + strings.Repeat("p", 1<<20) + `"}`},
		{"huge value", form, "advance=" + strings.Repeat("9", 100000) + "s"},
	} {
		t.Run(in.name, func(t *testing.T) {
			before := cs.writes.Load()
			resp, body := do(t, http.MethodPost, hs.URL+"/api/test/clock", in.ctype, in.body, nil)
			if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 400 or 413: %s", resp.StatusCode, body)
			}
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(body, &e) != nil || e.Error == "" {
				t.Fatalf("no RFC 6749 error body: %s", body)
			}
			if tc.Offset() != 0 || cs.writes.Load() != before {
				t.Fatalf("a refused request moved the clock to %v or stored something", tc.Offset())
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
