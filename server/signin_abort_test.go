package server_test

// A sign-in that ends at the identity provider without a user (the person
// cancels, the provider fails) must end the authorization request it was
// started for: the client's redirect URI gets the error at once, so a CLI
// waiting on its loopback port stops instead of running into its timeout.
// Only a redirect URI that /oauth/authorize itself accepts is ever used.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// wantAuthzError asserts that loc is exactly redirectURI with error, state
// and iss, and nothing else but an error_description.
func wantAuthzError(t *testing.T, env *servertest.Env, loc *url.URL, redirectURI, code, state string) {
	t.Helper()
	if loc == nil {
		t.Fatal("no redirect")
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Fatalf("redirected to %s; want the client's redirect URI %s", loc, redirectURI)
	}
	q := loc.Query()
	if q.Get("error") != code || q.Get("state") != state || q.Get("iss") != env.URL || q.Get("error_description") == "" {
		t.Fatalf("redirect query %v; want error=%s, state=%s, iss=%s and a description", q, code, state, env.URL)
	}
	for k := range q {
		switch k {
		case "error", "error_description", "state", "iss":
		default:
			t.Fatalf("redirect query has %s: %v", k, q)
		}
	}
}

func TestCancelAtIdentityProviderDeniesAuthorization(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("alice")
	b.CancelSignIn = true
	authURL, _ := c.authURL(nil)
	p, err := b.Get(context.Background(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusFound {
		t.Fatalf("after cancelling: status %d at %s: %s", p.Status, p.URL, p.Body)
	}
	wantAuthzError(t, env, p.URL, testRedirect, "access_denied", "st-123")
	if got := p.URL.Query().Get("error_description"); !strings.Contains(got, "cancelled") {
		t.Fatalf("error_description %q; want it to say the user cancelled", got)
	}
	// No session was started: the next authorization asks to sign in again.
	b.CancelSignIn = false
	if _, err := b.Consent(context.Background(), authURL, "approve"); err != nil {
		t.Fatalf("signing in after a cancel: %v", err)
	}
}

// startLogin begins a sign-in for returnTo in b's cookie jar and returns the
// state the server sent to the identity provider, and a client on the same
// jar that follows no redirects.
func startLogin(t *testing.T, env *servertest.Env, b *servertest.Browser, returnTo string) (string, *http.Client) {
	t.Helper()
	hc := &http.Client{Jar: b.Client.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(env.URL + "/auth/login?return_to=" + url.QueryEscape(returnTo))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), env.IdPURL) {
		t.Fatalf("login: %d to %v; want a redirect to the identity provider", resp.StatusCode, loc)
	}
	return loc.Query().Get("state"), hc
}

// callback delivers an identity provider's answer to /auth/callback.
func callback(t *testing.T, env *servertest.Env, hc *http.Client, q url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := hc.Get(env.URL + "/auth/callback?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestProviderErrorAnswersAuthorization(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	for _, tc := range []struct{ provider, want string }{
		{"access_denied", "access_denied"},
		{"server_error", "server_error"},
		{"temporarily_unavailable", "temporarily_unavailable"},
		{"login_required", "server_error"},
		{"invalid_request", "server_error"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			authURL, _ := c.authURL(nil)
			u, _ := url.Parse(authURL)
			state, hc := startLogin(t, env, env.Browser("bob"), u.RequestURI())
			resp, body := callback(t, env, hc, url.Values{"state": {state}, "error": {tc.provider}, "iss": {env.IdPURL}})
			if resp.StatusCode != http.StatusFound {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			loc, _ := resp.Location()
			wantAuthzError(t, env, loc, testRedirect, tc.want, "st-123")
		})
	}
}

func TestProviderErrorRedirectsOnlyToValidatedURIs(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	other := register(t, env)
	evil := "http://evil.example/callback"

	// The loopback port variant is what /oauth/authorize accepts, so it is
	// where the error goes.
	port := "http://127.0.0.1:41999/callback"
	authURL, _ := c.authURL(url.Values{"redirect_uri": {port}})
	u, _ := url.Parse(authURL)
	state, hc := startLogin(t, env, env.Browser("carol"), u.RequestURI())
	resp, body := callback(t, env, hc, url.Values{"state": {state}, "error": {"access_denied"}})
	loc, _ := resp.Location()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("port variant: status %d: %s", resp.StatusCode, body)
	}
	wantAuthzError(t, env, loc, port, "access_denied", "st-123")

	for name, returnTo := range map[string]string{
		"unregistered redirect_uri": "/oauth/authorize?" + url.Values{"client_id": {c.ID}, "redirect_uri": {evil}, "state": {"s"}, "response_type": {"code"}}.Encode(),
		"another client's":          "/oauth/authorize?" + url.Values{"client_id": {other.ID}, "redirect_uri": {evil}, "state": {"s"}}.Encode(),
		"unknown client":            "/oauth/authorize?" + url.Values{"client_id": {"nope"}, "redirect_uri": {testRedirect}, "state": {"s"}}.Encode(),
		"no client":                 "/oauth/authorize?" + url.Values{"redirect_uri": {testRedirect}}.Encode(),
		"repeated redirect_uri":     "/oauth/authorize?" + url.Values{"client_id": {c.ID}, "redirect_uri": {testRedirect, evil}}.Encode(),
		"not an authorization":      "/settings",
	} {
		t.Run(name, func(t *testing.T) {
			state, hc := startLogin(t, env, env.Browser("dave"), returnTo)
			resp, body := callback(t, env, hc, url.Values{"state": {state}, "error": {"access_denied"}})
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
				t.Fatalf("status %d, Location %q; want 403 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			if !strings.Contains(body, "You cancelled") || strings.Contains(body, "evil.example") {
				t.Fatalf("page does not say the sign-in was cancelled, or names the unregistered URI:\n%s", body)
			}
		})
	}

	// An answer for another sign-in (wrong state) ends nothing.
	authURL, _ = c.authURL(nil)
	u, _ = url.Parse(authURL)
	_, hc = startLogin(t, env, env.Browser("erin"), u.RequestURI())
	resp, _ = callback(t, env, hc, url.Values{"state": {"forged"}, "error": {"access_denied"}})
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Fatalf("wrong state: status %d, Location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestCLIStopsWhenSignInIsCancelled runs the CLI's own flow (package flows)
// and cancels at the identity provider: the flow must end with
// access_denied at once, not at its timeout.
func TestCLIStopsWhenSignInIsCancelled(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, env.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := flows.Register(ctx, http.DefaultClient, disc.AuthServer.RegistrationEndpoint, flows.ClientMetadata{
		ClientName: "cancel test", RedirectURIs: []string{"http://127.0.0.1/callback"}, TokenEndpointAuthMethod: flows.AuthMethodNone,
		GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := env.Browser("frank")
	b.CancelSignIn = true
	page := make(chan string, 1)
	start := time.Now()
	_, err = flows.AuthCode(ctx, flows.AuthCodeConfig{
		Discovery: disc, Client: flows.Client{ID: ci.ClientID, AuthMethod: flows.AuthMethodNone, RedirectURIs: ci.RedirectURIs},
		OpenBrowser: func(authURL string) error {
			p, err := b.Get(ctx, authURL)
			if err != nil {
				return err
			}
			// The browser follows the redirect to the CLI's loopback port.
			resp, err := http.Get(p.URL.String())
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			page <- string(body)
			return nil
		},
	})
	if !errors.Is(err, flows.ErrAccessDenied) {
		t.Fatalf("flow ended with %v; want access_denied", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the flow took %s to notice the cancel", d)
	}
	if body := <-page; !strings.Contains(body, "cancelled") {
		t.Fatalf("the loopback page does not say the sign-in was cancelled:\n%s", body)
	}
}
