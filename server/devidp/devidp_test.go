package devidp

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/clock"
)

// The relying party's callbacks. Nothing listens there: the browser stops at
// the redirect, as a real one would hand it to the RP.
const (
	redirectURI  = "http://127.0.0.1:9/auth/callback"
	otherURI     = "http://127.0.0.1:9/other/callback"
	clientID     = "test-rp"
	clientSecret = "s3cret-of-the-relying-party"
)

func testConfig(clk clock.Clock) Config {
	return Config{Clock: clk, ClientID: clientID, ClientSecret: clientSecret, RedirectURIs: []string{redirectURI, otherURI}}
}

// startIdP runs a provider on its own loopback listener via Start.
func startIdP(t *testing.T, clk clock.Clock) *Running {
	t.Helper()
	r, err := Start(t.Context(), "127.0.0.1:0", testConfig(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// relyingParty is the real RP stack the server package uses: go-oidc
// discovery and verification, x/oauth2 for the code flow.
type relyingParty struct {
	provider *oidc.Provider
	conf     oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func newRelyingParty(t *testing.T, issuer string, clk clock.Clock, style oauth2.AuthStyle) *relyingParty {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), issuer)
	if err != nil {
		t.Fatalf("go-oidc discovery: %v", err)
	}
	ep := provider.Endpoint()
	ep.AuthStyle = style
	return &relyingParty{
		provider: provider,
		conf: oauth2.Config{
			ClientID: clientID, ClientSecret: clientSecret, Endpoint: ep,
			RedirectURL: redirectURI, Scopes: []string{oidc.ScopeOpenID, "profile"},
		},
		verifier: provider.Verifier(&oidc.Config{ClientID: clientID, Now: clk.Now}),
	}
}

// newBrowser returns a client that follows redirects until the one back to
// the relying party, which it returns instead of following.
func newBrowser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), "http://127.0.0.1:9/") || len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

var (
	formRe   = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
)

// signInForm is the parsed sign-in page: where it posts and its hidden fields.
type signInForm struct {
	action string
	fields url.Values
}

func openForm(t *testing.T, browser *http.Client, authURL string) signInForm {
	t.Helper()
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET authorize: status %d, body %s", resp.StatusCode, body)
	}
	for k, want := range map[string]string{"Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY"} {
		if got := resp.Header.Get(k); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to contain %q", k, got, want)
		}
	}
	for _, want := range []string{"Development identity provider — not for production", `<meta name="viewport"`, `name="username"`} {
		if !strings.Contains(body, want) {
			t.Errorf("sign-in page lacks %q", want)
		}
	}
	m := formRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form in page:\n%s", body)
	}
	f := signInForm{action: html.UnescapeString(m[1]), fields: url.Values{}}
	for _, h := range hiddenRe.FindAllStringSubmatch(body, -1) {
		f.fields.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}
	return f
}

// submit posts the form with the given changes and returns the response,
// unfollowed when it redirects to the RP.
func (f signInForm) submit(t *testing.T, browser *http.Client, change func(url.Values)) (*http.Response, string) {
	t.Helper()
	v := url.Values{}
	for k, vs := range f.fields {
		v[k] = append([]string(nil), vs...)
	}
	change(v)
	resp, err := browser.PostForm(f.action, v)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

// login signs in as username and returns the callback the browser was sent to.
func login(t *testing.T, browser *http.Client, authURL, username string) url.Values {
	t.Helper()
	resp, body := openForm(t, browser, authURL).submit(t, browser, func(v url.Values) { v.Set("username", username) })
	return callbackQuery(t, resp, body)
}

func callbackQuery(t *testing.T, resp *http.Response, body string) url.Values {
	t.Helper()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d, want 303 to the RP; body %s", resp.StatusCode, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") {
		t.Fatalf("redirected to %q, want %s", resp.Header.Get("Location"), redirectURI)
	}
	return loc.Query()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type idClaims struct {
	Nonce             string `json:"nonce"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
}

// TestLoginWithRealRelyingParty runs the whole browser login with go-oidc and
// x/oauth2 against the provider, with both client authentication methods and
// with the provider mounted under an issuer path.
func TestLoginWithRealRelyingParty(t *testing.T) {
	clk := clock.NewFake(time.Now())
	mounted := func(t *testing.T) string {
		// The provider under a path on someone else's server.
		ts := httptest.NewUnstartedServer(nil)
		cfg := testConfig(clk)
		cfg.Issuer = "http://" + ts.Listener.Addr().String() + "/dev-idp"
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ts.Config.Handler = p.Handler()
		ts.Start()
		t.Cleanup(ts.Close)
		return p.Issuer()
	}
	tests := []struct {
		name   string
		issuer func(t *testing.T) string
		style  oauth2.AuthStyle
	}{
		{"Start, client_secret_basic", func(t *testing.T) string { return startIdP(t, clk).URL() }, oauth2.AuthStyleInHeader},
		{"Start, client_secret_post", func(t *testing.T) string { return startIdP(t, clk).URL() }, oauth2.AuthStyleInParams},
		{"issuer path, autodetect", mounted, oauth2.AuthStyleAutoDetect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issuer := tt.issuer(t)
			rp := newRelyingParty(t, issuer, clk, tt.style)
			verifier := oauth2.GenerateVerifier()
			authURL := rp.conf.AuthCodeURL("state-123", oidc.Nonce("nonce-456"), oauth2.S256ChallengeOption(verifier))

			cb := login(t, newBrowser(t), authURL, "  Alice ")
			if cb.Get("state") != "state-123" || cb.Get("iss") != issuer || cb.Get("code") == "" {
				t.Fatalf("callback query %v: want state-123, iss %s and a code", cb, issuer)
			}
			tok, err := rp.conf.Exchange(t.Context(), cb.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			if tok.TokenType != "Bearer" || tok.AccessToken == "" {
				t.Errorf("token_type %q, access_token %q", tok.TokenType, tok.AccessToken)
			}
			raw, _ := tok.Extra("id_token").(string)
			idt, err := rp.verifier.Verify(t.Context(), raw)
			if err != nil {
				t.Fatalf("Verify id_token: %v", err)
			}
			var c idClaims
			if err := idt.Claims(&c); err != nil {
				t.Fatal(err)
			}
			if idt.Subject != "dev-alice" || c.Name != "Alice" || c.PreferredUsername != "Alice" || c.Nonce != "nonce-456" {
				t.Errorf("sub %q, claims %+v; want dev-alice, Alice, nonce-456", idt.Subject, c)
			}
			if want := clk.Now().Add(time.Hour).Unix(); idt.Expiry.Unix() != want {
				t.Errorf("exp %v, want %v", idt.Expiry.Unix(), want)
			}
		})
	}
}

// TestSameNameSameUserAcrossRestarts: a new provider (new key, new process)
// still maps a name to the same subject.
func TestSameNameSameUserAcrossRestarts(t *testing.T) {
	clk := clock.NewFake(time.Now())
	var subs []string
	for _, name := range []string{"bob", "BOB"} {
		r := startIdP(t, clk)
		rp := newRelyingParty(t, r.URL(), clk, oauth2.AuthStyleInHeader)
		verifier := oauth2.GenerateVerifier()
		cb := login(t, newBrowser(t), rp.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), name)
		tok, err := rp.conf.Exchange(t.Context(), cb.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := tok.Extra("id_token").(string)
		idt, err := rp.verifier.Verify(t.Context(), raw)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, idt.Subject)
		_ = r.Close()
	}
	if subs[0] != "dev-bob" || subs[1] != subs[0] {
		t.Fatalf("subjects %v, want dev-bob twice", subs)
	}
}

// postToken calls the token endpoint directly, as an attacker or a buggy
// client would, and decodes the JSON body.
func postToken(t *testing.T, issuer string, form url.Values, basicUser, basicPass string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicUser != "" {
		req.SetBasicAuth(basicUser, basicPass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("token endpoint status %d, body not JSON: %q", resp.StatusCode, body)
	}
	return resp.StatusCode, resp.Header, m
}

func TestTokenEndpointErrors(t *testing.T) {
	clk := clock.NewFake(time.Now())
	r := startIdP(t, clk)
	rp := newRelyingParty(t, r.URL(), clk, oauth2.AuthStyleInHeader)

	// freshCode signs in and returns a code with its PKCE verifier.
	freshCode := func(t *testing.T) (code, verifier string) {
		verifier = oauth2.GenerateVerifier()
		cb := login(t, newBrowser(t), rp.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "carol")
		return cb.Get("code"), verifier
	}
	exchange := func(code, verifier string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {redirectURI}}
	}

	tests := []struct {
		name       string
		do         func(t *testing.T) (int, http.Header, map[string]any)
		wantStatus int
		wantError  string
	}{
		{"wrong client secret (basic)", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			return postToken(t, r.URL(), exchange(c, v), clientID, "wrong")
		}, 401, "invalid_client"},
		{"wrong client secret (post)", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			f := exchange(c, v)
			f.Set("client_id", clientID)
			f.Set("client_secret", clientSecret+"x")
			return postToken(t, r.URL(), f, "", "")
		}, 401, "invalid_client"},
		{"no client authentication", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			return postToken(t, r.URL(), exchange(c, v), "", "")
		}, 401, "invalid_client"},
		{"code reused", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			if status, _, body := postToken(t, r.URL(), exchange(c, v), clientID, clientSecret); status != 200 {
				t.Fatalf("first exchange: %d %v", status, body)
			}
			return postToken(t, r.URL(), exchange(c, v), clientID, clientSecret)
		}, 400, "invalid_grant"},
		{"code expired after 60 s", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			clk.Advance(61 * time.Second)
			return postToken(t, r.URL(), exchange(c, v), clientID, clientSecret)
		}, 400, "invalid_grant"},
		{"wrong PKCE verifier", func(t *testing.T) (int, http.Header, map[string]any) {
			c, _ := freshCode(t)
			return postToken(t, r.URL(), exchange(c, oauth2.GenerateVerifier()), clientID, clientSecret)
		}, 400, "invalid_grant"},
		{"redirect_uri differs", func(t *testing.T) (int, http.Header, map[string]any) {
			c, v := freshCode(t)
			f := exchange(c, v)
			f.Set("redirect_uri", otherURI)
			return postToken(t, r.URL(), f, clientID, clientSecret)
		}, 400, "invalid_grant"},
		{"unknown code", func(t *testing.T) (int, http.Header, map[string]any) {
			return postToken(t, r.URL(), exchange("no-such-code", oauth2.GenerateVerifier()), clientID, clientSecret)
		}, 400, "invalid_grant"},
		{"missing code_verifier", func(t *testing.T) (int, http.Header, map[string]any) {
			c, _ := freshCode(t)
			return postToken(t, r.URL(), exchange(c, ""), clientID, clientSecret)
		}, 400, "invalid_request"},
		{"unsupported grant type", func(t *testing.T) (int, http.Header, map[string]any) {
			return postToken(t, r.URL(), url.Values{"grant_type": {"password"}}, clientID, clientSecret)
		}, 400, "unsupported_grant_type"},
		{"oversized body", func(t *testing.T) (int, http.Header, map[string]any) {
			return postToken(t, r.URL(), url.Values{"grant_type": {strings.Repeat("a", 100<<10)}}, clientID, clientSecret)
		}, 413, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := tt.do(t)
			if status != tt.wantStatus || body["error"] != tt.wantError {
				t.Errorf("got %d %v, want %d %s", status, body, tt.wantStatus, tt.wantError)
			}
			if h.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", h.Get("Cache-Control"))
			}
		})
	}

	// The RP library sees the same errors as typed RetrieveErrors.
	c, _ := freshCode(t)
	_, err := rp.conf.Exchange(t.Context(), c, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); !ok || re.ErrorCode != "invalid_grant" {
		t.Errorf("Exchange with wrong verifier: %v, want RetrieveError invalid_grant", err)
	}
}

// TestAuthorizeRejects covers requests refused before any form is shown.
func TestAuthorizeRejects(t *testing.T) {
	r := startIdP(t, clock.NewFake(time.Now()))
	good := url.Values{
		"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {"openid profile"}, "state": {"st"}, "nonce": {"n"},
		"code_challenge": {pkce.S256(oauth2.GenerateVerifier())}, "code_challenge_method": {"S256"},
	}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for kk, vv := range good {
			q[kk] = vv
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	tests := []struct {
		name      string
		query     url.Values
		wantPage  bool   // 400 HTML, no redirect
		wantError string // error in the redirect otherwise
		wantState string
	}{
		{"unregistered redirect_uri", with("redirect_uri", "http://127.0.0.1:9/evil"), true, "", ""},
		{"redirect_uri prefix of registered", with("redirect_uri", "http://127.0.0.1:9/auth"), true, "", ""},
		{"missing redirect_uri", with("redirect_uri", ""), true, "", ""},
		{"unknown client_id", with("client_id", "someone-else"), true, "", ""},
		{"response_type token", with("response_type", "token"), false, "unsupported_response_type", "st"},
		{"no openid scope", with("scope", "profile"), false, "invalid_scope", "st"},
		{"missing state", with("state", ""), false, "invalid_request", ""},
		{"missing code_challenge", with("code_challenge", ""), false, "invalid_request", "st"},
		{"plain challenge method", with("code_challenge_method", "plain"), false, "invalid_request", "st"},
		{"prompt=none", with("prompt", "none"), false, "login_required", "st"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := newBrowser(t).Get(r.URL() + "/authorize?" + tt.query.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body := readBody(t, resp)
			if tt.wantPage {
				if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("status %d, Location %q, type %q; want a 400 HTML page", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Type"))
				}
				if strings.Contains(body, `name="username"`) {
					t.Error("rejected request still shows the sign-in form")
				}
				return
			}
			cb := callbackQuery(t, resp, body)
			if cb.Get("error") != tt.wantError || cb.Get("state") != tt.wantState || cb.Get("iss") != r.URL() || cb.Has("code") {
				t.Errorf("callback %v, want error %s, state %q, iss, no code", cb, tt.wantError, tt.wantState)
			}
		})
	}
}

// TestSignInForm covers what a person (or a forger) can do with the form.
func TestSignInForm(t *testing.T) {
	clk := clock.NewFake(time.Now())
	r := startIdP(t, clk)
	rp := newRelyingParty(t, r.URL(), clk, oauth2.AuthStyleInHeader)
	browser := newBrowser(t)
	authURL := rp.conf.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))

	pageTests := []struct {
		name     string
		change   func(url.Values)
		wantForm string // text the re-shown form must hold; "" means an error page without the form
	}{
		{"empty name", func(v url.Values) { v.Set("username", "") }, "Enter a user name."},
		{"blank name", func(v url.Values) { v.Set("username", " \t ") }, "Enter a user name."},
		{"65 characters", func(v url.Values) { v.Set("username", strings.Repeat("é", 65)) }, "at most 64 characters"},
		{"control character", func(v url.Values) { v.Set("username", "eve\x00admin") }, "control or invisible"},
		{"bidi override", func(v url.Values) { v.Set("username", "eve\u202enimda") }, "control or invisible"},
		{"invalid UTF-8", func(v url.Values) { v.Set("username", "eve\xff") }, "not valid text"},
		{"name is escaped when re-shown", func(v url.Values) { v.Set("username", "<b>x\x01") }, "&lt;b&gt;x"},
		{"tampered redirect_uri", func(v url.Values) { v.Set("redirect_uri", otherURI); v.Set("username", "a") }, ""},
		{"tampered state", func(v url.Values) { v.Set("state", "other"); v.Set("username", "a") }, ""},
		{"tampered code_challenge", func(v url.Values) {
			v.Set("code_challenge", pkce.S256(oauth2.GenerateVerifier()))
			v.Set("username", "a")
		}, ""},
		{"missing mac", func(v url.Values) { v.Del("mac"); v.Set("username", "a") }, ""},
		{"repeated field", func(v url.Values) { v.Add("state", "st"); v.Set("username", "a") }, ""},
	}
	for _, tt := range pageTests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := openForm(t, browser, authURL).submit(t, browser, tt.change)
			if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
				t.Fatalf("status %d, Location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			if hasForm := strings.Contains(body, `name="username"`); hasForm != (tt.wantForm != "") {
				t.Fatalf("form shown = %v, want %v; body:\n%s", hasForm, tt.wantForm != "", body)
			}
			if !strings.Contains(body, tt.wantForm) {
				t.Errorf("page lacks %q:\n%s", tt.wantForm, body)
			}
			// The problem is announced and tied to the field it is about.
			if tt.wantForm != "" && (!strings.Contains(body, `id="username-error" role="alert"`) ||
				!strings.Contains(body, `aria-describedby="username-error" aria-invalid="true"`)) {
				t.Errorf("the problem is not an alert linked to the user name field:\n%s", body)
			}
		})
	}

	t.Run("re-shown form still works", func(t *testing.T) {
		f := openForm(t, browser, authURL)
		resp, body := f.submit(t, browser, func(v url.Values) { v.Set("username", "") })
		if resp.StatusCode != 400 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		again := signInForm{action: f.action, fields: url.Values{}}
		for _, h := range hiddenRe.FindAllStringSubmatch(body, -1) {
			again.fields.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
		}
		resp, body = again.submit(t, browser, func(v url.Values) { v.Set("username", "dave") })
		if cb := callbackQuery(t, resp, body); cb.Get("code") == "" {
			t.Errorf("no code after correcting the name: %v", cb)
		}
	})
	t.Run("64 characters accepted", func(t *testing.T) {
		if cb := login(t, browser, authURL, strings.Repeat("é", 64)); cb.Get("code") == "" {
			t.Errorf("no code: %v", cb)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		resp, body := openForm(t, browser, authURL).submit(t, browser, func(v url.Values) { v.Set("action", "cancel") })
		if cb := callbackQuery(t, resp, body); cb.Get("error") != "access_denied" || cb.Get("state") != "st" || cb.Has("code") {
			t.Errorf("callback %v, want access_denied with state", cb)
		}
	})
	t.Run("form older than 10 minutes", func(t *testing.T) {
		f := openForm(t, browser, authURL)
		clk.Advance(11 * time.Minute)
		resp, body := f.submit(t, browser, func(v url.Values) { v.Set("username", "a") })
		if resp.StatusCode != 400 || !strings.Contains(body, "expired") {
			t.Errorf("status %d, body %s; want 400 expired", resp.StatusCode, body)
		}
	})
	t.Run("oversized body", func(t *testing.T) {
		f := openForm(t, browser, authURL)
		resp, _ := f.submit(t, browser, func(v url.Values) { v.Set("username", strings.Repeat("a", 100<<10)) })
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
	})
}

func TestSubject(t *testing.T) {
	tests := []struct{ name, want string }{
		{"alice", "dev-alice"},
		{"Alice", "dev-alice"},
		{"alice.smith_2-x", "dev-alice.smith_2-x"},
		{"Alice Smith", "dev-alice%20smith"},
		{"a%20b", "dev-a%2520b"}, // cannot collide with "a b"
		{"Zoë", "dev-zo%C3%AB"},
	}
	for _, tt := range tests {
		if got := subject(tt.name); got != tt.want {
			t.Errorf("subject(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDiscoveryAndJWKS(t *testing.T) {
	r := startIdP(t, clock.NewFake(time.Now()))
	resp, err := http.Get(r.URL() + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(readBody(t, resp)), &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"issuer":                                r.URL(),
		"authorization_endpoint":                r.URL() + "/authorize",
		"token_endpoint":                        r.URL() + "/token",
		"jwks_uri":                              r.URL() + "/jwks",
		"response_types_supported":              []any{"code"},
		"subject_types_supported":               []any{"public"},
		"id_token_signing_alg_values_supported": []any{"ES256"},
		"code_challenge_methods_supported":      []any{"S256"},
		"scopes_supported":                      []any{"openid", "profile"},
		"token_endpoint_auth_methods_supported": []any{"client_secret_basic", "client_secret_post"},
	}
	for k, v := range want {
		if got, _ := json.Marshal(meta[k]); string(got) != mustJSON(t, v) {
			t.Errorf("%s = %s, want %s", k, got, mustJSON(t, v))
		}
	}

	resp, err = http.Get(r.URL() + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal([]byte(readBody(t, resp)), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0]["kty"] != "EC" || set.Keys[0]["crv"] != "P-256" || set.Keys[0]["kid"] == "" || set.Keys[0]["d"] != "" {
		t.Errorf("jwks %v: want one public P-256 key with a kid", set.Keys)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewConfig(t *testing.T) {
	bad := []Config{
		{RedirectURIs: []string{redirectURI}},
		{Issuer: "127.0.0.1:5556", RedirectURIs: []string{redirectURI}},
		{Issuer: "http://127.0.0.1:5556?x=1", RedirectURIs: []string{redirectURI}},
		{Issuer: "http://127.0.0.1:5556/{x}", RedirectURIs: []string{redirectURI}},
		{Issuer: "http://127.0.0.1:5556"},
		{Issuer: "http://127.0.0.1:5556", RedirectURIs: []string{"/relative"}},
	}
	for _, cfg := range bad {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
	a, err := New(Config{Issuer: "http://127.0.0.1:5556", RedirectURIs: []string{redirectURI}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Issuer: "http://127.0.0.1:5556", RedirectURIs: []string{redirectURI}})
	if err != nil {
		t.Fatal(err)
	}
	if a.ClientID() != DefaultClientID || len(a.ClientSecret()) < 32 || a.ClientSecret() == b.ClientSecret() {
		t.Errorf("defaults: id %q, secrets %q and %q; want %s and two distinct random secrets", a.ClientID(), a.ClientSecret(), b.ClientSecret(), DefaultClientID)
	}
}

// TestShutdown: Start's server really stops.
func TestShutdown(t *testing.T) {
	r, err := Start(t.Context(), "127.0.0.1:0", testConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(r.URL() + "/jwks"); err == nil {
		t.Error("server still answers after Shutdown")
	}
}
