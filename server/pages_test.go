package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// A client may call itself anything, the server's own brand included: the
// consent page names the server and the redirect host, labels the name
// self-declared, and points out a name that looks like the server's.
func TestConsentLabelsSelfDeclaredNames(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, tc := range []struct {
		name       string
		likeServer bool
	}{
		{"mcpauth", true},
		{"MCPAuth Login", true},
		{"Sign in to 127.0.0.1", true},
		{"Weather tool", false},
	} {
		c := &testClient{t: t, env: env, RedirectURI: testRedirect}
		c.ID = registerMeta(t, env, map[string]any{"client_name": tc.name, "redirect_uris": []string{testRedirect}})
		authURL, _ := c.authURL(nil)
		page, err := env.Browser("quinn").Get(context.Background(), authURL)
		if err != nil || page.Status != http.StatusOK {
			t.Fatalf("%q: consent page: %v", tc.name, err)
		}
		serverHost := env.URL[len("http://"):]
		body := page.Body
		for _, want := range []string{
			"<h1>Allow access to " + serverHost + "?</h1>",
			`id="redirect-host">127.0.0.1:9999<`,
			`id="server-name">` + serverHost + `<`,
			`id="self-declared">self-declared, not verified<`,
			`id="approve-warning"`,
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("%q: consent page lacks %q", tc.name, want)
			}
		}
		if bytes.Index(body, []byte(`id="redirect-host"`)) > bytes.Index(body, []byte(`id="client-name"`)) {
			t.Errorf("%q: the self-declared name comes before the redirect host", tc.name)
		}
		if got := bytes.Contains(body, []byte(`id="name-like-server"`)); got != tc.likeServer {
			t.Errorf("%q: name-like-server note shown = %v, want %v", tc.name, got, tc.likeServer)
		}
	}
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
