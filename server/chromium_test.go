package server_test

// Real-browser tests of the reference server's pages: headless Chromium
// (driven by chromedp) against local.Start, i.e. the server and the
// development identity provider on their own loopback listeners, with a
// SQLite file as the store. The client side of each flow is plain net/http,
// as an MCP client would do it. Without Chromium these tests skip, or fail
// with CI=true (see browsertest).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/browsertest"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

const chrDeviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// chrEnv is one reference server with its identity provider, and a browser.
type chrEnv struct {
	t      *testing.T
	url    string
	idpURL string
	ctx    context.Context // the browser tab, with the test's deadline
	http   *http.Client
}

type chrOptions struct {
	clock  clock.Clock // nil means the wall clock
	wrap   func(http.Handler) http.Handler
	phone  bool          // emulate a 375x667 phone
	limits server.Limits // zero means the defaults
}

func newChrEnv(t *testing.T, opts chrOptions) *chrEnv {
	t.Helper()
	// The browser first: without one the test skips before anything starts.
	ctx := browsertest.Start(t, browsertest.Options{})
	if opts.phone {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 667, chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
			t.Fatalf("emulating a phone: %v", err)
		}
	}
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "mcpauth.db"))
	if err != nil {
		t.Fatalf("opening store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	inst, err := local.Start(context.Background(), local.Options{Store: st, Clock: opts.clock, Wrap: opts.wrap, Limits: opts.limits})
	if err != nil {
		t.Fatalf("starting server: %v", err)
	}
	t.Cleanup(func() { inst.Close() })
	return &chrEnv{t: t, url: inst.URL, idpURL: inst.IdPURL, ctx: ctx, http: &http.Client{Timeout: 10 * time.Second}}
}

// open navigates the browser and returns the final response (after redirects).
func (e *chrEnv) open(u string) *network.Response {
	e.t.Helper()
	resp, err := chromedp.RunResponse(e.ctx, chromedp.Navigate(u))
	if err != nil {
		e.t.Fatalf("opening %s: %v", u, err)
	}
	return resp
}

// click clicks a button that submits a form and returns the response of the
// page the browser lands on.
func (e *chrEnv) click(sel string) *network.Response {
	e.t.Helper()
	resp, err := chromedp.RunResponse(e.ctx, browsertest.Click(sel))
	if err != nil {
		e.t.Fatalf("clicking %s: %v", sel, err)
	}
	return resp
}

func (e *chrEnv) text(sel string) string {
	e.t.Helper()
	s, err := chromedp.Run(e.ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		e.t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (e *chrEnv) typeInto(sel, s string) {
	e.t.Helper()
	if err := chromedp.Do(e.ctx, chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), s)); err != nil {
		e.t.Fatalf("typing into %s: %v", sel, err)
	}
}

// press clicks an element that changes the page without loading another.
func (e *chrEnv) press(sel string) {
	e.t.Helper()
	if err := chromedp.Do(e.ctx, browsertest.Click(sel)); err != nil {
		e.t.Fatalf("clicking %s: %v", sel, err)
	}
}

// visible reports whether sel is rendered now (no waiting).
func (e *chrEnv) visible(sel string) bool {
	e.t.Helper()
	v, err := chromedp.Run(e.ctx, chromedp.Evaluate[bool](fmt.Sprintf("(() => { const el = document.querySelector(%q); return !!el && el.checkVisibility(); })()", sel)))
	if err != nil {
		e.t.Fatalf("checking %s: %v", sel, err)
	}
	return v
}

// waitText polls sel's text for up to 5 s until it is not empty.
func (e *chrEnv) waitText(sel string) string {
	e.t.Helper()
	for range 50 {
		s, err := chromedp.Run(e.ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).textContent", sel)))
		if err != nil {
			e.t.Fatalf("reading %s: %v", sel, err)
		}
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// attr is sel's attribute name, "" when absent.
func (e *chrEnv) attr(sel, name string) string {
	e.t.Helper()
	v, err := chromedp.Run(e.ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).getAttribute(%q) || \"\"", sel, name)))
	if err != nil {
		e.t.Fatalf("reading %s[%s]: %v", sel, name, err)
	}
	return v
}

// count is the number of elements matching sel now (no waiting).
func (e *chrEnv) count(sel string) int {
	e.t.Helper()
	n, err := chromedp.Run(e.ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		e.t.Fatalf("counting %s: %v", sel, err)
	}
	return n
}

// signIn expects the browser on the dev IdP's sign-in page, signs in as
// user and returns the page the server sends the browser back to.
func (e *chrEnv) signIn(resp *network.Response, user string) *network.Response {
	e.t.Helper()
	if !strings.HasPrefix(resp.URL, e.idpURL+"/") {
		e.t.Fatalf("browser at %s (status %d); want the identity provider's sign-in page at %s", resp.URL, resp.Status, e.idpURL)
	}
	e.typeInto(`input[name=username]`, user)
	back := e.click(`button[name=action][value=signin]`)
	if !strings.HasPrefix(back.URL, e.url+"/") || back.Status != http.StatusOK {
		e.t.Fatalf("after sign-in the browser is at %s with status %d; want a page of %s", back.URL, back.Status, e.url)
	}
	return back
}

func (e *chrEnv) do(req *http.Request) (int, map[string]any) {
	e.t.Helper()
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", req.Method, req.URL.Path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		e.t.Fatalf("%s %s: status %d, body is not JSON: %q", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return resp.StatusCode, out
}

func (e *chrEnv) postJSON(path string, v any) (int, map[string]any) {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(string(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return e.do(req)
}

func (e *chrEnv) postForm(path string, form url.Values) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(req)
}

// ping calls /api/ping with credential and returns the status and user_id.
func (e *chrEnv) ping(credential string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+"/api/ping", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+credential)
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatalf("ping: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		UserID string `json:"user_id"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "ok" {
			e.t.Fatalf("ping: 200 with status %q, err %v", out.Status, err)
		}
	}
	return resp.StatusCode, out.UserID
}

func (e *chrEnv) register(meta map[string]any) string {
	e.t.Helper()
	status, out := e.postJSON("/oauth/register", meta)
	id, _ := out["client_id"].(string)
	if status != http.StatusCreated || id == "" {
		e.t.Fatalf("register: status %d: %v", status, out)
	}
	return id
}

// chrCallback is the OAuth client's redirect URI: a loopback server that
// records the query of every request it gets.
type chrCallback struct {
	URL  string // the redirect URI
	Host string
	got  chan url.Values
}

func newChrCallback(t *testing.T) *chrCallback {
	cb := &chrCallback{got: make(chan url.Values, 4)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case cb.got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>client</title><p id="client-done">You can close this window.</p>`)
	}))
	t.Cleanup(ts.Close)
	cb.URL = ts.URL + "/callback"
	cb.Host = strings.TrimPrefix(ts.URL, "http://")
	return cb
}

func (cb *chrCallback) query(t *testing.T) url.Values {
	t.Helper()
	select {
	case q := <-cb.got:
		return q
	case <-time.After(5 * time.Second):
		t.Fatal("the client's redirect URI was never called")
		return nil
	}
}

// chrAuthRequest registers a client whose redirect URI is cb and returns an
// authorization URL with PKCE, its state and verifier.
func (e *chrEnv) authRequest(cb *chrCallback, clientName string) (clientID, authURL, state, verifier string) {
	e.t.Helper()
	clientID = e.register(map[string]any{
		"client_name": clientName, "redirect_uris": []string{cb.URL},
		"grant_types": []string{"authorization_code"}, "response_types": []string{"code"}, "scope": "mcp",
	})
	verifier, err := pkce.NewVerifier()
	if err != nil {
		e.t.Fatal(err)
	}
	state = "st-" + verifier[:12]
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {cb.URL}, "scope": {"mcp"},
		"state": {state}, "code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
	}
	return clientID, e.url + "/oauth/authorize?" + q.Encode(), state, verifier
}

func TestChromiumSignInAndRegenerateAPIKey(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	settings := e.signIn(e.open(e.url+"/settings"), "alice")
	if settings.URL != e.url+"/settings" {
		t.Fatalf("after sign-in the browser is at %s; want back on %s/settings", settings.URL, e.url)
	}

	// The session cookie is HttpOnly and Secure, and the page cannot read it.
	cookies, err := chromedp.Call(e.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{e.url}})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == "auth_token" {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || !session.Secure {
		t.Fatalf("auth_token cookie = %+v; want one that is HttpOnly and Secure", session)
	}
	if js, err := chromedp.Run(e.ctx, chromedp.Evaluate[string]("document.cookie")); err != nil || strings.Contains(js, "auth_token") {
		t.Fatalf("document.cookie = %q (err %v); the session must be invisible to scripts", js, err)
	}

	userID := e.text("#user-id")
	// The key is not on screen until asked for (screen shares, shoulders).
	if e.visible("#api-key") {
		t.Fatal("Settings shows the API key in clear on load")
	}
	if cli := e.text("#apikey-cli"); !strings.Contains(cli, "mcpauth apikey set "+e.url+"/mcp") {
		t.Fatalf("#apikey-cli says %q; want the mcpauth apikey set command for %s/mcp", cli, e.url)
	}
	e.press("#reveal-key")
	oldKey := e.text("#api-key")
	if !strings.HasPrefix(oldKey, "mcpa_") {
		t.Fatalf("API key %q lacks the mcpa_ prefix", oldKey)
	}
	if status, id := e.ping(oldKey); status != http.StatusOK || id != userID {
		t.Fatalf("ping with the shown key: %d, user %q; want 200 and the user shown on the page (%q)", status, id, userID)
	}
	if n := e.count("#regenerated"); n != 0 {
		t.Fatal("the page claims a regeneration before one happened")
	}

	// The key can be copied: the Copy button only appears when the page's
	// one script ran, i.e. the CSP allows it by its hash.
	if !e.visible("#copy-key") {
		t.Fatal("#copy-key is hidden: the copy script did not run under the page's CSP")
	}
	e.press("#copy-key")
	if e.waitText("#copy-status") == "" {
		t.Fatal("#copy-status stays empty after pressing Copy")
	}

	// Regenerating asks first: the button is hidden until the person opens
	// the confirmation, which says what happens and offers Cancel.
	if e.visible("#regenerate") {
		t.Fatal("#regenerate is visible before the confirmation was opened")
	}
	e.press("#regenerate-start")
	if w := e.text("#regenerate-warning"); !strings.Contains(w, "stops working") || !e.visible("#regenerate-cancel") {
		t.Fatalf("confirmation says %q (Cancel visible: %v)", w, e.visible("#regenerate-cancel"))
	}
	if status, id := e.ping(oldKey); status != http.StatusOK || id != userID {
		t.Fatalf("opening the confirmation changed the key: ping %d", status)
	}
	after := e.click("#regenerate")
	if after.Status != http.StatusOK || after.URL != e.url+"/settings?regenerated=1" {
		t.Fatalf("after regenerating: %d at %s", after.Status, after.URL)
	}
	if msg := e.text("#regenerated"); !strings.Contains(msg, "previous key no longer works") {
		t.Fatalf("#regenerated says %q", msg)
	}
	if e.visible("#api-key") {
		t.Fatal("the new key is shown in clear before it was asked for")
	}
	e.press("#reveal-key")
	newKey := e.text("#api-key")
	if newKey == oldKey || !strings.HasPrefix(newKey, "mcpa_") {
		t.Fatalf("new key %q (old %q); want a different mcpa_ key", newKey, oldKey)
	}
	if status, _ := e.ping(oldKey); status != http.StatusUnauthorized {
		t.Fatalf("ping with the replaced key: %d; want 401", status)
	}
	if status, id := e.ping(newKey); status != http.StatusOK || id != userID {
		t.Fatalf("ping with the new key: %d, user %q; want 200 and %q", status, id, userID)
	}
	if got := e.text("#user-id"); got != userID {
		t.Fatalf("user id changed from %q to %q on regenerating", userID, got)
	}
}

func TestChromiumConsentApprove(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	cb := newChrCallback(t)
	clientID, authURL, state, verifier := e.authRequest(cb, "Browser Test Client")

	consent := e.signIn(e.open(authURL), "bob")
	if !strings.HasPrefix(consent.URL, e.url+"/oauth/authorize?") {
		t.Fatalf("after sign-in the browser is at %s; want the consent page", consent.URL)
	}
	serverHost := strings.TrimPrefix(e.url, "http://")
	if h := e.text("h1"); !strings.Contains(h, serverHost) || strings.Contains(h, "Browser Test Client") {
		t.Fatalf("consent heading %q; want it to name the server, not the client's self-chosen name", h)
	}
	if host := e.text("#redirect-host"); host != cb.Host {
		t.Fatalf("#redirect-host = %q, want %q", host, cb.Host)
	}
	if name := e.text("#client-name"); !strings.Contains(name, "Browser Test Client") || !strings.Contains(name, "self-declared") {
		t.Fatalf("#client-name = %q; want the name labelled self-declared", name)
	}
	if got := e.text("#server-name"); got != serverHost {
		t.Fatalf("#server-name = %q, want %q", got, serverHost)
	}
	if w := e.text("#approve-warning"); !strings.Contains(w, "Only approve if you started this") {
		t.Fatalf("#approve-warning = %q", w)
	}

	landed := e.click("#approve")
	if landed.Status != http.StatusOK || !strings.HasPrefix(landed.URL, cb.URL+"?") {
		t.Fatalf("after approving the browser is at %s (%d); want the client's redirect URI", landed.URL, landed.Status)
	}
	q := cb.query(t)
	if q.Get("code") == "" || q.Get("state") != state || q.Get("iss") != e.url || q.Get("error") != "" {
		t.Fatalf("callback query %v; want code, state %q and iss %q", q, state, e.url)
	}

	status, tok := e.postForm("/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {cb.URL},
		"client_id": {clientID}, "code_verifier": {verifier},
	})
	access, _ := tok["access_token"].(string)
	if status != http.StatusOK || access == "" || tok["token_type"] != "Bearer" {
		t.Fatalf("token exchange: %d %v", status, tok)
	}
	if status, id := e.ping(access); status != http.StatusOK || id == "" {
		t.Fatalf("ping with the access token: %d, user %q", status, id)
	}
}

func TestChromiumConsentDeny(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	cb := newChrCallback(t)
	_, authURL, state, _ := e.authRequest(cb, "Denied Client")
	e.signIn(e.open(authURL), "carol")

	landed := e.click("#deny")
	if !strings.HasPrefix(landed.URL, cb.URL+"?") {
		t.Fatalf("after denying the browser is at %s; want the client's redirect URI", landed.URL)
	}
	q := cb.query(t)
	if q.Get("error") != "access_denied" || q.Get("state") != state || q.Get("iss") != e.url || q.Has("code") {
		t.Fatalf("callback query %v; want error=access_denied, state %q, iss and no code", q, state)
	}
}

// chrDevice is a device authorization started over HTTP.
type chrDevice struct {
	clientID, deviceCode, userCode string
}

func (e *chrEnv) startDevice(clientName string) chrDevice {
	e.t.Helper()
	clientID := e.register(map[string]any{"client_name": clientName, "grant_types": []string{chrDeviceGrant}})
	status, out := e.postJSON("/api/oauth/device/code", map[string]any{"client_id": clientID, "scope": "mcp"})
	d := chrDevice{clientID: clientID}
	d.deviceCode, _ = out["device_code"].(string)
	d.userCode, _ = out["user_code"].(string)
	if status != http.StatusOK || d.deviceCode == "" || len(d.userCode) != 9 || out["verification_uri"] != e.url+"/auth/device" {
		e.t.Fatalf("device code: %d %v", status, out)
	}
	return d
}

func (e *chrEnv) pollDevice(d chrDevice) (int, map[string]any) {
	e.t.Helper()
	return e.postJSON("/api/oauth/device/token", map[string]any{
		"device_code": d.deviceCode, "client_id": d.clientID, "grant_type": chrDeviceGrant,
	})
}

// typeUserCode types the code as a person might: lower case, no hyphen.
func (e *chrEnv) typeUserCode(code string) *network.Response {
	e.t.Helper()
	e.typeInto("#user_code", strings.ToLower(strings.ReplaceAll(code, "-", "")))
	return e.click("#continue")
}

// deviceToConfirm signs in at /auth/device and enters d's code; the browser
// ends on the confirm page.
func (e *chrEnv) deviceToConfirm(d chrDevice, user string) {
	e.t.Helper()
	e.signIn(e.open(e.url+"/auth/device"), user)
	if resp := e.typeUserCode(d.userCode); resp.Status != http.StatusOK {
		e.t.Fatalf("entering the user code: status %d", resp.Status)
	}
	if got := e.text("#user-code"); got != d.userCode {
		e.t.Fatalf("confirm page shows code %q, want %q", got, d.userCode)
	}
}

func TestChromiumDeviceApprove(t *testing.T) {
	clk := clock.NewFake(time.Now()) // wall time, so the browser's cookie lifetimes agree
	e := newChrEnv(t, chrOptions{clock: clk})
	d := e.startDevice("Device Test Client")
	if status, out := e.pollDevice(d); status != http.StatusBadRequest || out["error"] != "authorization_pending" {
		t.Fatalf("poll before approval: %d %v", status, out)
	}

	e.deviceToConfirm(d, "dave")
	serverHost := strings.TrimPrefix(e.url, "http://")
	if h := e.text("h1"); !strings.Contains(h, serverHost) {
		t.Fatalf("confirm heading %q does not name the server", h)
	}
	if name := e.text("#client-name"); !strings.Contains(name, "Device Test Client") || !strings.Contains(name, "self-declared") {
		t.Fatalf("#client-name = %q; want the name labelled self-declared", name)
	}
	if got := e.text("#access"); !strings.Contains(got, "(mcp)") {
		t.Fatalf("#access = %q; want the scope", got)
	}
	if got := e.text("#server-name"); got != serverHost {
		t.Fatalf("#server-name = %q, want %q", got, serverHost)
	}
	if w := e.text("#approve-warning"); !strings.Contains(w, "Only approve if you started this") {
		t.Fatalf("#approve-warning = %q", w)
	}
	if resp := e.click("#approve"); resp.Status != http.StatusOK {
		t.Fatalf("approving: status %d", resp.Status)
	}
	if r := e.text("#result"); !strings.Contains(r, "connected") {
		t.Fatalf("#result = %q; want it to say connected", r)
	}

	clk.Advance(5 * time.Second) // one polling interval since the last poll
	status, tok := e.pollDevice(d)
	access, _ := tok["access_token"].(string)
	if status != http.StatusOK || access == "" {
		t.Fatalf("poll after approval: %d %v", status, tok)
	}
	if status, id := e.ping(access); status != http.StatusOK || id == "" {
		t.Fatalf("ping with the device token: %d, user %q", status, id)
	}
}

func TestChromiumDeviceDeny(t *testing.T) {
	clk := clock.NewFake(time.Now())
	e := newChrEnv(t, chrOptions{clock: clk})
	d := e.startDevice("Unwanted Device")
	e.deviceToConfirm(d, "erin")
	e.click("#deny")
	if r := e.text("#result"); !strings.Contains(r, "denied") {
		t.Fatalf("#result = %q; want it to say denied", r)
	}
	clk.Advance(5 * time.Second)
	if status, out := e.pollDevice(d); status != http.StatusBadRequest || out["error"] != "access_denied" {
		t.Fatalf("poll after denial: %d %v; want access_denied", status, out)
	}
}

func TestChromiumDeviceWrongCode(t *testing.T) {
	clk := clock.NewFake(time.Now())
	e := newChrEnv(t, chrOptions{clock: clk})
	d := e.startDevice("Device Test Client")
	e.signIn(e.open(e.url+"/auth/device"), "frank")

	// A well-formed code that is not d's: same letters, digits shifted.
	wrong := []byte(d.userCode)
	wrong[8] = '0' + (wrong[8]-'0'+1)%10
	for _, entered := range []string{string(wrong), "NOT-A-CODE"} {
		resp := e.typeUserCode(entered)
		if resp.Status != http.StatusBadRequest {
			t.Fatalf("%q: status %d, want 400", entered, resp.Status)
		}
		if msg := e.text("#error"); !strings.Contains(msg, "not valid") {
			t.Fatalf("%q: #error = %q", entered, msg)
		}
		// Announced to screen readers, and tied to the field it is about.
		if role, desc, inv := e.attr("#error", "role"), e.attr("#user_code", "aria-describedby"), e.attr("#user_code", "aria-invalid"); role != "alert" || !slices.Contains(strings.Fields(desc), "error") || inv != "true" {
			t.Fatalf("%q: #error role %q, #user_code aria-describedby %q, aria-invalid %q; want alert, one naming error, true", entered, role, desc, inv)
		}
		if e.count("#user_code") != 1 || e.count("#user-code") != 0 || e.count("#approve") != 0 {
			t.Fatalf("%q: the browser left the entry page", entered)
		}
	}
	clk.Advance(5 * time.Second)
	if status, out := e.pollDevice(d); status != http.StatusBadRequest || out["error"] != "authorization_pending" {
		t.Fatalf("poll after wrong codes: %d %v; want authorization_pending", status, out)
	}
	// The form on the error page still works.
	if resp := e.typeUserCode(d.userCode); resp.Status != http.StatusOK || e.text("#user-code") != d.userCode {
		t.Fatalf("the right code after wrong ones: status %d", resp.Status)
	}
}

// chrLayout is what a phone user sees of a page.
type chrLayout struct {
	ScreenWidth float64 `json:"screenWidth"`
	InnerWidth  float64 `json:"innerWidth"`
	ScrollWidth float64 `json:"scrollWidth"`
	BodyFont    float64 `json:"bodyFont"`
	MinFont     float64 `json:"minFont"`
	MinFontText string  `json:"minFontText"`
	Buttons     []struct {
		ID     string  `json:"id"`
		Left   float64 `json:"left"`
		Right  float64 `json:"right"`
		Height float64 `json:"height"`
	} `json:"buttons"`
}

const chrLayoutJS = `(() => {
  const out = {screenWidth: screen.width, innerWidth: innerWidth, scrollWidth: document.documentElement.scrollWidth,
    bodyFont: parseFloat(getComputedStyle(document.body).fontSize), minFont: 1000, minFontText: "", buttons: []};
  for (const el of document.body.querySelectorAll("*")) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== "");
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (own && el.getClientRects().length > 0 && size < out.minFont) { out.minFont = size; out.minFontText = el.textContent.trim().slice(0, 40); }
  }
  for (const b of document.querySelectorAll("button, a.button, summary")) {
    if (!b.checkVisibility()) continue; // not rendered (closed details, hidden)
    const r = b.getBoundingClientRect();
    out.buttons.push({id: b.id, left: r.left, right: r.right, height: r.height});
  }
  return out;
})()`

// checkPhoneLayout asserts the page fits a 375 px wide phone and is readable,
// and saves a screenshot of it.
func (e *chrEnv) checkPhoneLayout(name string, wantButtons ...string) {
	e.t.Helper()
	browsertest.Screenshot(e.t, e.ctx, name)
	l, err := chromedp.Run(e.ctx, chromedp.Evaluate[chrLayout](chrLayoutJS))
	if err != nil {
		e.t.Fatalf("%s: measuring: %v", name, err)
	}
	if l.ScreenWidth != 375 {
		e.t.Fatalf("%s: screen is %v px wide; the phone emulation did not apply", name, l.ScreenWidth)
	}
	// A mobile browser zooms out to fit content wider than the screen, which
	// widens the layout viewport (innerWidth) instead of scrolling.
	if l.ScrollWidth > 375 || l.InnerWidth > 375 {
		e.t.Errorf("%s: content is %v px wide (viewport %v px); it does not fit a 375 px phone", name, l.ScrollWidth, l.InnerWidth)
	}
	if l.BodyFont < 14 || l.MinFont < 14 {
		e.t.Errorf("%s: body text %v px, smallest text %v px (%q); want at least 14 px", name, l.BodyFont, l.MinFont, l.MinFontText)
	}
	found := map[string]bool{}
	for _, b := range l.Buttons {
		found[b.ID] = true
		if b.Left < 0 || b.Right > 375 {
			e.t.Errorf("%s: button #%s spans %v..%v px; want it inside 0..375", name, b.ID, b.Left, b.Right)
		}
		if b.Height < 44 {
			e.t.Errorf("%s: button #%s is %v px tall; want a 44 px touch target", name, b.ID, b.Height)
		}
	}
	for _, id := range wantButtons {
		if !found[id] {
			e.t.Errorf("%s: no button #%s", name, id)
		}
	}
}

func TestChromiumPhoneLayout(t *testing.T) {
	e := newChrEnv(t, chrOptions{phone: true})
	cb := newChrCallback(t)
	_, authURL, _, _ := e.authRequest(cb, "A Client With A Long Name: SuperLongUnbrokenApplicationNameWithoutSpaces")
	e.signIn(e.open(authURL), "grace.hopper.with.a.long.name@example.com")
	e.checkPhoneLayout("consent", "approve", "deny")

	d := e.startDevice("Phone Device Client")
	e.open(e.url + "/auth/device")
	e.checkPhoneLayout("device-enter", "continue")
	e.typeUserCode(d.userCode)
	if got := e.text("#user-code"); got != d.userCode {
		t.Fatalf("confirm page shows %q, want %q", got, d.userCode)
	}
	e.checkPhoneLayout("device-confirm", "approve", "deny")

	e.open(e.url + "/settings")
	e.checkPhoneLayout("settings", "reveal-key", "regenerate-start", "copy-key", "logout")
	e.press("#regenerate-start")
	e.checkPhoneLayout("settings-regenerate", "regenerate", "regenerate-cancel")
	e.open(e.url + "/auth/logout")
	e.checkPhoneLayout("logout", "logout", "cancel")
}

// chrFramable strips the anti-framing headers from pages whose URL carries
// frametest=allow. It is the control of TestChromiumConsentCannotBeFramed:
// it shows the test's check does see a consent page that is framed.
func chrFramable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("frametest") == "allow" {
			w = &chrStripFraming{ResponseWriter: w}
		}
		next.ServeHTTP(w, r)
	})
}

type chrStripFraming struct {
	http.ResponseWriter
	wrote bool
}

func (w *chrStripFraming) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Del("X-Frame-Options")
		w.Header().Del("Content-Security-Policy")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *chrStripFraming) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// framedApprove loads a page of another origin that frames target, and
// reports whether the framed document has an #approve button. It reads the
// frame through the DevTools DOM, which (unlike the framing page's scripts)
// may look into a cross-origin frame, so "no button" means the browser
// refused to render the consent page, not that the same-origin policy hid it.
func (e *chrEnv) framedApprove(target string) bool {
	e.t.Helper()
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>attacker</title><p id="attacker">Click the button below!</p>
<iframe id="victim" src="%s" width="400" height="400"></iframe>`, target)
	}))
	defer attacker.Close()
	// The top page's load event waits for the frame, blocked or not.
	if resp := e.open(attacker.URL); resp.Status != http.StatusOK || e.count("#attacker") != 1 {
		e.t.Fatalf("framing page did not load: %d", resp.Status)
	}
	doc, err := chromedp.Call(e.ctx, dom.GetDocument, dom.GetDocumentParams{Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil {
		e.t.Fatalf("reading the DOM: %v", err)
	}
	frame := chrFindNode(doc.Root, func(n *cdp.Node) bool { return n.LocalName == "iframe" })
	if frame == nil {
		e.t.Fatal("the framing page has no iframe")
	}
	return frame.ContentDocument != nil && chrFindNode(frame.ContentDocument, func(n *cdp.Node) bool {
		return n.LocalName == "button" && chrAttr(n, "id") == "approve"
	}) != nil
}

func chrAttr(n *cdp.Node, name string) string {
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if n.Attributes[i] == name {
			return n.Attributes[i+1]
		}
	}
	return ""
}

func chrFindNode(n *cdp.Node, match func(*cdp.Node) bool) *cdp.Node {
	if n == nil {
		return nil
	}
	if match(n) {
		return n
	}
	for _, c := range n.Children {
		if f := chrFindNode(c, match); f != nil {
			return f
		}
	}
	return chrFindNode(n.ContentDocument, match)
}

func TestChromiumConsentCannotBeFramed(t *testing.T) {
	e := newChrEnv(t, chrOptions{wrap: chrFramable})
	cb := newChrCallback(t)
	_, authURL, _, _ := e.authRequest(cb, "Framed Client")
	// Signed in at the top level first, so a framed request carries the
	// session and would get the consent page if framing were allowed.
	e.signIn(e.open(authURL), "heidi")
	if e.count("#approve") != 1 {
		t.Fatal("the consent page has no #approve at the top level")
	}

	if !e.framedApprove(authURL + "&frametest=allow") {
		t.Fatal("control: with the anti-framing headers stripped, the framed consent page should show #approve; the check cannot see into the frame")
	}
	if e.framedApprove(authURL) {
		browsertest.Screenshot(t, e.ctx, "framed")
		t.Fatal("the consent page rendered inside another site's iframe; it must refuse framing")
	}
}
