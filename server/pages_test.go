package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A client may call itself anything, the server's own brand included: the
// consent page names the server and the redirect host and labels the name
// self-declared. It warns only when the name claims the server's identity
// or a known brand's, and never for our own CLI as it registers itself
// (its exact name, loopback redirect URIs); other names are stated plainly.
func TestConsentLabelsSelfDeclaredNames(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	const webRedirect = "https://app.example/callback"
	for _, tc := range []struct {
		name, redirect string
		claims         string // "" means no warning
	}{
		{"mcpauth CLI", testRedirect, ""},
		{"mcpauth CLI", webRedirect, "mcpauth"},
		{"mcpauth Official Login", testRedirect, "mcpauth"},
		{"MCPAuth Login", testRedirect, "mcpauth"},
		{"Sign in to 127.0.0.1", testRedirect, env.URL[len("http://"):]},
		{"GitHub Copilot", testRedirect, "GitHub"},
		{"VSCode helper", testRedirect, "VS Code"},
		{"Weather tool", testRedirect, ""},
		{"Pineapple notes", testRedirect, ""},
	} {
		c := &testClient{t: t, env: env, RedirectURI: tc.redirect}
		c.ID = registerMeta(t, env, map[string]any{"client_name": tc.name, "redirect_uris": []string{tc.redirect}})
		authURL, _ := c.authURL(nil)
		page, err := env.Browser("quinn").Get(context.Background(), authURL)
		if err != nil || page.Status != http.StatusOK {
			t.Fatalf("%q: consent page: %v", tc.name, err)
		}
		serverHost := env.URL[len("http://"):]
		body := page.Body
		for _, want := range []string{
			"<h1>Allow access to " + serverHost + "?</h1>",
			`id="redirect-host">` + redirectHostOf(tc.redirect) + `<`,
			`id="server-name">` + serverHost + `<`,
			`id="self-declared"><span class="nobreak">self-declared,</span> <span class="nobreak">not verified</span><`,
			`id="approve-warning"`,
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("%q: consent page lacks %q", tc.name, want)
			}
		}
		if bytes.Index(body, []byte(`id="redirect-host"`)) > bytes.Index(body, []byte(`id="client-name"`)) {
			t.Errorf("%q: the self-declared name comes before the redirect host", tc.name)
		}
		warned := bytes.Contains(body, []byte(`id="name-like-server"`))
		if warned != (tc.claims != "") {
			t.Errorf("%q (redirect %s): warning shown = %v, want %v", tc.name, tc.redirect, warned, tc.claims != "")
		}
		if warned && !bytes.Contains(body, []byte("claims to be "+tc.claims+"</strong>,")) {
			t.Errorf("%q: warning does not name %q", tc.name, tc.claims)
		}
		fact := "The application chose this name itself; its sign-in returns to " + redirectHostOf(tc.redirect)
		if !warned && !bytes.Contains(body, []byte(fact)) {
			t.Errorf("%q: no plain statement %q", tc.name, fact)
		}
	}
}

func redirectHostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// The Copy button's script is the only one any page may run: the CSP names
// it by hash, and the page carries exactly that text.
func TestSettingsScriptMatchesCSP(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	page, err := env.Browser("rosa").Get(context.Background(), env.URL+"/settings")
	if err != nil || page.Status != http.StatusOK {
		t.Fatalf("settings: %v", err)
	}
	body := string(page.Body)
	start, end := strings.Index(body, "<script>"), strings.Index(body, "</script>")
	if start < 0 || end < start || strings.Count(body, "<script") != 1 {
		t.Fatalf("want exactly one inline script on Settings:\n%s", body)
	}
	sum := sha256.Sum256([]byte(body[start+len("<script>") : end]))
	csp := page.Header.Get("Content-Security-Policy")
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(csp, want) || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q; want %s, no unsafe-inline, default-src 'none'", csp, want)
	}
	if !strings.Contains(body, `id="copy-key" hidden`) {
		t.Fatal("the Copy button must be hidden until the script shows it")
	}
}

// An authorization request the server refuses without redirecting (an
// unknown client, an unregistered return address) gets a page with a way
// forward: what to do, whom to tell, the request id the operator can find
// in the log, and a link home.
func TestAuthorizeErrorPagesGiveAWayForward(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	known := registerMeta(t, env, map[string]any{"client_name": "Weather tool", "redirect_uris": []string{testRedirect}})
	for _, tc := range []struct {
		name, clientID, redirect string
		wantStep                 string
	}{
		{"unknown client", "no-such-client", testRedirect, "registers again when it starts over"},
		{"unregistered redirect", known, "http://127.0.0.1:1/elsewhere", "Nothing was sent to the application"},
	} {
		q := url.Values{"response_type": {"code"}, "client_id": {tc.clientID}, "redirect_uri": {tc.redirect},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "state": {"s"}}
		page, err := env.Browser("ursula").Get(context.Background(), env.URL+"/oauth/authorize?"+q.Encode())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body := string(page.Body)
		if page.Status != http.StatusBadRequest {
			t.Fatalf("%s: status %d; want 400:\n%s", tc.name, page.Status, body)
		}
		id := page.Header.Get("X-Request-Id")
		for _, want := range []string{
			`<ol id="next-steps">`, "start the sign-in again", "tell its developer", tc.wantStep,
			`id="request-id">` + id + `<`, `<a href="/" id="home-link">Go to the home page of ` + env.URL[len("http://"):] + `</a>`,
		} {
			if id == "" || !strings.Contains(body, want) {
				t.Errorf("%s: error page lacks %q (request id %q):\n%s", tc.name, want, id, body)
			}
		}
	}
}
