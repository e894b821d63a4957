package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// getWithCookie sends GET u with only the auth_token cookie set to value,
// without following redirects.
func getWithCookie(t *testing.T, u, value string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "auth_token", Value: value})
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// An access token issued to an OAuth client is not a browser session
// (service.md: the cookie JWT is "for browser sessions only"). Put in the
// auth_token cookie it must not show Settings (the user's API key, which
// never expires), the device page (whose CSRF token would let the client
// approve a device code of its own) or a consent page: each sends the
// browser to sign in instead.
func TestAccessTokenIsNoSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("alice")
	access := c.token(b)
	authURL, _ := c.authURL(nil)
	for _, page := range []string{env.URL + "/settings", env.URL + "/auth/device?user_code=ABCD-1234", authURL} {
		resp, body := getWithCookie(t, page, access)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc == nil || loc.Path != "/auth/login" {
			t.Errorf("GET %s with an access token as the session: %d %s, want a redirect to sign in", page, resp.StatusCode, resp.Header.Get("Location"))
		}
		if strings.Contains(body, "mcpa_") || strings.Contains(body, "csrf_token") {
			t.Errorf("GET %s with an access token leaks the key or a CSRF token", page)
		}
	}
	// POSTs judge the session the same way: no CSRF token can make an
	// access token approve anything.
	for _, path := range []string{"/auth/device", "/settings", "/oauth/authorize"} {
		req, _ := http.NewRequest(http.MethodPost, env.URL+path, strings.NewReader("action=approve&user_code=ABCD-1234&csrf_token=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "auth_token", Value: access})
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		toLogin := resp.StatusCode == http.StatusFound && loc != nil && loc.Path == "/auth/login"
		if !toLogin && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
			t.Errorf("POST %s with an access token as the session: %d %s, want a 4xx or sign-in", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// The real session still opens Settings and, as before, works as a
	// bearer token at the API (contract: a JWT from browser login).
	session := sessionToken(t, env, b)
	if resp, body := getWithCookie(t, env.URL+"/settings", session); resp.StatusCode != http.StatusOK || !strings.Contains(body, "mcpa_") {
		t.Fatalf("GET /settings with the session: %d", resp.StatusCode)
	}
	if resp, _ := ping(t, env, session); resp.StatusCode != http.StatusOK {
		t.Fatalf("session as bearer: %d", resp.StatusCode)
	}
	if resp, _ := ping(t, env, access); resp.StatusCode != http.StatusOK {
		t.Fatalf("access token as bearer: %d", resp.StatusCode)
	}
}
