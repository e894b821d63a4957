package token_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// seed stores an expired, refreshable bundle for server whose token
// endpoint is tokenURL, and returns the store.
func seed(t *testing.T, c *clitest.CLI, server, resource, tokenURL string) (*keyring.Store, creds.Bundle) {
	t.Helper()
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	b := creds.Bundle{Kind: creds.KindOAuth, Issuer: server, Resource: resource, AccessToken: "at-old", TokenType: "Bearer",
		RefreshToken: "rt-old", Expiry: time.Now().Add(-time.Minute), TokenEndpoint: tokenURL,
		Client: &creds.ClientInfo{ClientID: "cid", TokenEndpointAuthMethod: "none"}}
	if err := creds.Save(st, server, "", b); err != nil {
		t.Fatal(err)
	}
	return st, b
}

// Malformed refresh answers fail with a clear message and exit 6, and
// nothing is written: the stored entry is byte for byte what it was.
func TestTokenMalformedRefreshResponse(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"not JSON": func(w http.ResponseWriter) { w.WriteHeader(200); _, _ = w.Write([]byte("<html>oops</html>")) },
		"no access_token": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"token_type":"Bearer"}`))
		},
		"no token_type": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"x"}`))
		},
		"502": func(w http.ResponseWriter) { http.Error(w, "bad gateway", 502) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
			t.Cleanup(srv.Close)
			c := clitest.New(t, nil)
			server := srv.URL + "/mcp"
			st, before := seed(t, c, server, server, srv.URL+"/token")
			code, stdout, stderr := c.Run("token")
			if code != clierr.ExitNetwork || stdout != "" || !strings.Contains(stderr, "refreshing the token for "+server) {
				t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
			}
			after, err := creds.Load(st, server, "")
			if err != nil || after.AccessToken != before.AccessToken || after.RefreshToken != before.RefreshToken || !after.Expiry.Equal(before.Expiry) {
				t.Errorf("entry changed: %v, %v", after, err)
			}
		})
	}
}

// A stored refresh token issued for another resource is never sent: exit 3
// with the login hint, and the token endpoint sees no request.
func TestTokenRefreshForAnotherResource(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	c := clitest.New(t, nil)
	server := srv.URL + "/mcp"
	seed(t, c, server, "https://other.example/mcp", srv.URL+"/token")
	code, stdout, stderr := c.Run("token")
	if code != clierr.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "another resource") || !strings.Contains(stderr, "run: mcpauth login "+server) {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
	if hits.Load() != 0 {
		t.Errorf("the token endpoint got %d request(s)", hits.Load())
	}
}

// A token stored before the token response's syntax check (an older
// mcpauth, or another tool's store) that carries control characters is
// never printed: token and token --header refuse it, so no injected header
// line reaches curl -H @file.
func TestTokenRefusesToPrintAStoredHostileToken(t *testing.T) {
	c := clitest.New(t, nil)
	c.Vars["MCPAUTH_STORAGE"] = "file"
	const server = "http://127.0.0.1:9/mcp"
	st, b := seed(t, c, server, server, "http://127.0.0.1:9/token")
	b.AccessToken, b.Expiry = "at-1\r\nX-Injected: yes", time.Now().Add(time.Hour)
	if err := creds.Save(st, server, "", b); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"token", server}, {"token", server, "--header"}} {
		code, stdout, stderr := c.Run(args...)
		if code != clierr.ExitFailure || stdout != "" || !strings.Contains(stderr, "not printing it") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}
