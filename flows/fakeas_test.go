package flows_test

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/pkce"
)

// fakeAS simulates a third-party authorization server for the authorization
// code flow: a consent-less /authorize that redirects at once, and a token
// endpoint that checks PKCE, redirect_uri and client_id like a real one.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server
	rg  *registrar

	mu          sync.Mutex
	codes       map[string]url.Values // code -> authorization query
	authQueries []url.Values
	tokenForms  []url.Values
	tokenAuth   []string

	iss          string // sent as iss in the redirect when non-empty
	denyWith     string // redirect with this error instead of a code
	denyDesc     string
	rejectClient func(clientID string) bool
	// forgetClient: the authorization endpoint answers 400 invalid_client
	// in JSON, without redirecting (the MCP TypeScript SDK's demo provider
	// after a restart).
	forgetClient func(clientID string) bool
}

func newFakeAS(t *testing.T) *fakeAS {
	srv, mux := newServer(t)
	a := &fakeAS{t: t, srv: srv, rg: &registrar{}, codes: map[string]url.Values{}}
	mux.HandleFunc("/oauth/authorize", a.authorize)
	mux.HandleFunc("/oauth/token", a.token)
	mux.HandleFunc("/oauth/register", a.rg.handler(t))
	return a
}

func (a *fakeAS) disc(mod func(*flows.AuthServerMetadata)) *flows.Discovery {
	return discFor(a.srv.URL, mod)
}

func (a *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.authQueries = append(a.authQueries, q)
	a.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("client_id") == "" {
		http.Error(w, "bad client or redirect_uri", http.StatusBadRequest) // never redirect
		return
	}
	if a.forgetClient != nil && a.forgetClient(q.Get("client_id")) {
		oauthErr(w, 400, "invalid_client", "Invalid client_id")
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	if a.iss != "" {
		back.Set("iss", a.iss)
	}
	switch {
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || !pkce.ValidChallenge(q.Get("code_challenge")):
		back.Set("error", "invalid_request")
	case a.denyWith != "":
		back.Set("error", a.denyWith)
		back.Set("error_description", a.denyDesc)
	default:
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		code := hex.EncodeToString(b)
		a.mu.Lock()
		a.codes[code] = q
		a.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (a *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, 400, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if u, _, ok := r.BasicAuth(); ok {
		clientID, _ = url.QueryUnescape(u)
	}
	a.mu.Lock()
	a.tokenForms = append(a.tokenForms, f)
	a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
	q, ok := a.codes[f.Get("code")]
	delete(a.codes, f.Get("code"))
	a.mu.Unlock()
	switch {
	case a.rejectClient != nil && a.rejectClient(clientID):
		oauthErr(w, 401, "invalid_client", "unknown client")
	case f.Get("grant_type") != "authorization_code":
		oauthErr(w, 400, "unsupported_grant_type", "")
	case !ok:
		oauthErr(w, 400, "invalid_grant", "unknown code")
	case !pkce.Verify(f.Get("code_verifier"), q.Get("code_challenge")):
		oauthErr(w, 400, "invalid_grant", "code_verifier does not match")
	case f.Get("redirect_uri") != q.Get("redirect_uri") || clientID != q.Get("client_id"):
		oauthErr(w, 400, "invalid_grant", "redirect_uri or client_id differs")
	default:
		// A token travels in a header: no space, whatever the client id.
		writeJSON(w, 200, map[string]any{"access_token": "at-" + strings.ReplaceAll(clientID, " ", "_"), "token_type": "Bearer",
			"expires_in": 3600, "scope": q.Get("scope"), "id_token": "idt"})
	}
}

func (a *fakeAS) snapshot() (auth, tok []url.Values, hdr []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.authQueries...), append([]url.Values(nil), a.tokenForms...), append([]string(nil), a.tokenAuth...)
}

// browserResult is what the fake browser saw at the end of the redirects.
type browserResult struct {
	status int
	body   string
	header http.Header
}

// browser returns an OpenBrowser that plays the user's browser: it GETs
// the authorization URL and follows the redirect to the loopback listener.
func browser(t *testing.T, seen chan<- browserResult) func(string) error {
	return func(authURL string) error {
		resp, body := get(t, authURL)
		if seen != nil {
			seen <- browserResult{resp.StatusCode, body, resp.Header}
		}
		return nil
	}
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := (&http.Client{}).Get(u)
	if err != nil {
		t.Errorf("GET %s: %v", u, err)
		return &http.Response{Header: http.Header{}}, ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("reading %s: %v", u, err)
	}
	return resp, string(b)
}
