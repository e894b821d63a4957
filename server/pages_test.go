package server_test

import (
	"bytes"
	"context"
	"net/http"
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
