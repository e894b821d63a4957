package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
)

// testClient plays an MCP client against the server with raw HTTP.
type testClient struct {
	t           *testing.T
	env         *servertest.Env
	ID          string
	RedirectURI string
}

const testRedirect = "http://127.0.0.1:9999/callback"

func newEnv(t *testing.T) *servertest.Env {
	t.Helper()
	return servertest.New(t, servertest.Options{})
}

// register registers a client for both grants.
func register(t *testing.T, env *servertest.Env) *testClient {
	t.Helper()
	resp, body := postJSON(t, env.URL+"/oauth/register", map[string]any{
		"client_name":   "Test Client",
		"redirect_uris": []string{testRedirect},
		"grant_types":   []string{"authorization_code", "urn:ietf:params:oauth:grant-type:device_code"},
	})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: status %d: %s", resp.StatusCode, body)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	mustJSON(t, body, &out)
	return &testClient{t: t, env: env, ID: out.ClientID, RedirectURI: testRedirect}
}

// authURL builds an authorization request with a fresh verifier.
func (c *testClient) authURL(extra url.Values) (string, string) {
	v, err := pkce.NewVerifier()
	if err != nil {
		c.t.Fatal(err)
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.ID},
		"redirect_uri":          {c.RedirectURI},
		"scope":                 {"mcp"},
		"state":                 {"st-123"},
		"code_challenge":        {pkce.S256(v)},
		"code_challenge_method": {"S256"},
	}
	for k, vs := range extra {
		if len(vs) == 0 {
			q.Del(k)
		} else {
			q[k] = vs
		}
	}
	return c.env.URL + "/oauth/authorize?" + q.Encode(), v
}

// code runs the consent as user and returns a fresh code and its verifier.
func (c *testClient) code(b *servertest.Browser) (string, string) {
	c.t.Helper()
	u, v := c.authURL(nil)
	back, err := b.Consent(context.Background(), u, "approve")
	if err != nil {
		c.t.Fatalf("consent: %v", err)
	}
	q := back.Query()
	if q.Get("code") == "" || q.Get("state") != "st-123" || q.Get("iss") != c.env.URL {
		c.t.Fatalf("consent redirect %s lacks code, state or iss", back)
	}
	return q.Get("code"), v
}

func (c *testClient) exchange(code, verifier string) (*http.Response, []byte) {
	return postForm(c.t, c.env.URL+"/oauth/token", url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {c.RedirectURI},
		"client_id":     {c.ID},
		"code_verifier": {verifier},
	})
}

// token runs the whole authorization code flow for user and returns a JWT.
func (c *testClient) token(b *servertest.Browser) string {
	c.t.Helper()
	code, v := c.code(b)
	resp, body := c.exchange(code, v)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("exchange: status %d: %s", resp.StatusCode, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	mustJSON(c.t, body, &tok)
	return tok.AccessToken
}

func postJSON(t *testing.T, u string, v any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	return do(t, http.MethodPost, u, "application/json", string(b), nil)
}

func postForm(t *testing.T, u string, v url.Values) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodPost, u, "application/x-www-form-urlencoded", v.Encode(), nil)
}

func do(t *testing.T, method, u, contentType, body string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	resp, data, err := send(method, u, contentType, body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// send is do without a *testing.T, for goroutines. It never follows
// redirects, so a test sees every Location the server sends.
func send(method, u, contentType, body string, hdr http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, data, nil
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func ping(t *testing.T, env *servertest.Env, credential string) (*http.Response, []byte) {
	t.Helper()
	h := http.Header{}
	if credential != "" {
		h.Set("Authorization", "Bearer "+credential)
	}
	return do(t, http.MethodGet, env.URL+"/api/ping", "", "", h)
}

func mustJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

// oauthErr asserts an RFC 6749 error response with status and code.
func oauthErr(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if e.Error != code {
		t.Fatalf("error %q, want %q: %s", e.Error, code, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q, want no-store", cc)
	}
}

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// registerMeta registers a client with the given metadata and returns its id.
func registerMeta(t *testing.T, env *servertest.Env, meta map[string]any) string {
	t.Helper()
	resp, body := postJSON(t, env.URL+"/oauth/register", meta)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register %v: status %d: %s", meta, resp.StatusCode, body)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	mustJSON(t, body, &out)
	return out.ClientID
}

// tokenBody is a token response (RFC 6749 §5.1).
type tokenBody struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// deviceBody is a device authorization response (RFC 8628 §3.2).
type deviceBody struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// requestDeviceCode asks for a device code for clientID (JSON) and fails the
// test unless it gets one.
func requestDeviceCode(t *testing.T, env *servertest.Env, clientID string) deviceBody {
	t.Helper()
	resp, body := postJSON(t, env.URL+"/api/oauth/device/code", map[string]string{"client_id": clientID, "scope": "mcp"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("device code: status %d: %s", resp.StatusCode, body)
	}
	var d deviceBody
	mustJSON(t, body, &d)
	return d
}

// pollDevice polls the contract's JSON device token endpoint.
func pollDevice(t *testing.T, env *servertest.Env, clientID, deviceCode string) (*http.Response, []byte) {
	t.Helper()
	return postJSON(t, env.URL+"/api/oauth/device/token", map[string]string{
		"grant_type": deviceGrant, "device_code": deviceCode, "client_id": clientID,
	})
}

// pollDeviceForm polls /oauth/token form-encoded, as RFC 8628 §3.4 clients do.
func pollDeviceForm(t *testing.T, env *servertest.Env, clientID, deviceCode string) (*http.Response, []byte) {
	t.Helper()
	return postForm(t, env.URL+"/oauth/token", url.Values{
		"grant_type": {deviceGrant}, "device_code": {deviceCode}, "client_id": {clientID},
	})
}

// mustToken asserts a successful token response with the contract's fields
// and headers, and returns it.
func mustToken(t *testing.T, resp *http.Response, body []byte) tokenBody {
	t.Helper()
	return mustTokenAged(t, resp, body, 0)
}

// mustTokenAged is mustToken for an access token issued age ago (a pair
// answered again within the refresh reuse interval).
func mustTokenAged(t *testing.T, resp *http.Response, body []byte, age time.Duration) tokenBody {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token: status %d: %s", resp.StatusCode, body)
	}
	var tok tokenBody
	mustJSON(t, body, &tok)
	if want := int64((24*time.Hour - age) / time.Second); tok.AccessToken == "" || tok.TokenType != "Bearer" || tok.ExpiresIn != want {
		t.Fatalf("token response %s: want an access_token, token_type Bearer, expires_in %d", body, want)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("token response Content-Type %q", ct)
	}
	if cc, pr := resp.Header.Get("Cache-Control"), resp.Header.Get("Pragma"); cc != "no-store" || pr != "no-cache" {
		t.Fatalf("token response Cache-Control %q, Pragma %q; want no-store, no-cache", cc, pr)
	}
	return tok
}

// userID pings with credential and returns the user it names, failing the
// test unless the ping succeeds.
func userID(t *testing.T, env *servertest.Env, credential string) string {
	t.Helper()
	resp, body := ping(t, env, credential)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: status %d: %s", resp.StatusCode, body)
	}
	var out struct {
		Status string `json:"status"`
		UserID string `json:"user_id"`
	}
	mustJSON(t, body, &out)
	if out.Status != "ok" || out.UserID == "" {
		t.Fatalf("ping body %s", body)
	}
	return out.UserID
}

// wantChallenge asserts a 401 with the bearer challenge of decisions.md:
// resource_metadata and scope always, error="invalid_token" exactly when a
// credential was presented.
func wantChallenge(t *testing.T, env *servertest.Env, resp *http.Response, body []byte, presented bool) {
	t.Helper()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
	}
	got := resp.Header.Values("WWW-Authenticate")
	if len(got) != 1 {
		t.Fatalf("WWW-Authenticate %q, want one challenge", got)
	}
	prefix := `Bearer resource_metadata="` + env.URL + `/.well-known/oauth-protected-resource", scope="mcp"`
	if !strings.HasPrefix(got[0], prefix) {
		t.Fatalf("WWW-Authenticate %q, want it to start with %q", got[0], prefix)
	}
	if has := strings.Contains(got[0], `error="invalid_token"`); has != presented {
		t.Fatalf("WWW-Authenticate %q: error=\"invalid_token\" present=%v, want %v", got[0], has, presented)
	}
}

// sessionToken returns the JWT in the browser's auth_token cookie.
func sessionToken(t *testing.T, env *servertest.Env, b *servertest.Browser) string {
	t.Helper()
	u, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == "auth_token" && c.Value != "" {
			return c.Value
		}
	}
	t.Fatal("browser has no auth_token cookie")
	return ""
}

// csrfToken signs b in and reads the CSRF token of its session from Settings.
func csrfToken(t *testing.T, env *servertest.Env, b *servertest.Browser) string {
	t.Helper()
	p, err := b.Get(context.Background(), env.URL+"/settings")
	if err != nil {
		t.Fatal(err)
	}
	m := csrfField.FindSubmatch(p.Body) // the pattern lives in faults_test.go
	if m == nil || len(m[1]) == 0 {
		t.Fatalf("no CSRF token on the settings page (status %d)", p.Status)
	}
	return string(m[1])
}

// noFollow is b's client (its cookies) without following redirects.
func noFollow(b *servertest.Browser) *http.Client {
	c := *b.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// browserPost posts a form with b's cookies, without following redirects.
func browserPost(t *testing.T, b *servertest.Browser, u string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	resp, err := noFollow(b).Post(u, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// htmlPage asserts a browser error page: status, HTML, and no redirect.
func htmlPage(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q, want an HTML page", ct)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		t.Fatalf("error page redirects to %s", loc)
	}
}

// countingStore counts successful writes, so a test can assert that a
// rejected request stored nothing.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (c *countingStore) count(err error) error {
	if err == nil {
		c.writes.Add(1)
	}
	return err
}

func (c *countingStore) CreateClient(ctx context.Context, cl store.Client) error {
	return c.count(c.Store.CreateClient(ctx, cl))
}
func (c *countingStore) CreateAuthCode(ctx context.Context, a store.AuthCode) error {
	return c.count(c.Store.CreateAuthCode(ctx, a))
}
func (c *countingStore) CreateDeviceCode(ctx context.Context, d store.DeviceCode) error {
	return c.count(c.Store.CreateDeviceCode(ctx, d))
}
func (c *countingStore) ConsumeAuthCode(ctx context.Context, h string, r store.Redemption) (store.AuthCode, error) {
	a, err := c.Store.ConsumeAuthCode(ctx, h, r)
	return a, c.count(err)
}
func (c *countingStore) UpdateDeviceCode(ctx context.Context, h string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	d, err := c.Store.UpdateDeviceCode(ctx, h, fn)
	return d, c.count(err)
}
func (c *countingStore) UpsertUser(ctx context.Context, u store.User) error {
	return c.count(c.Store.UpsertUser(ctx, u))
}
func (c *countingStore) SetAPIKey(ctx context.Context, k store.APIKey) error {
	return c.count(c.Store.SetAPIKey(ctx, k))
}
func (c *countingStore) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return c.count(c.Store.RevokeToken(ctx, jti, exp))
}
func (c *countingStore) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	n, err := c.Store.AddCounter(ctx, name, delta)
	if delta == 0 {
		return n, err // a read
	}
	return n, c.count(err)
}
func (c *countingStore) CreateRefreshToken(ctx context.Context, t store.RefreshToken) error {
	return c.count(c.Store.CreateRefreshToken(ctx, t))
}
func (c *countingStore) RotateRefreshToken(ctx context.Context, h string, next store.RefreshToken, now time.Time, successor []byte) (store.RefreshToken, error) {
	t, err := c.Store.RotateRefreshToken(ctx, h, next, now, successor)
	return t, c.count(err)
}
func (c *countingStore) RevokeRefreshFamily(ctx context.Context, id string) ([]store.RevokedToken, error) {
	l, err := c.Store.RevokeRefreshFamily(ctx, id)
	return l, c.count(err)
}
