package approve

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/htmlform"
)

// FormApprover acts as the test user by driving the service's own HTML pages
// the way a browser would, with a cookie jar and no JavaScript. What it expects
// of the pages (the reference server follows this):
//
//   - Login: GET /auth/login redirects to the identity provider. Any page with
//     a form holding an input named "username" is taken for the provider's
//     login form: Username (and Password, if there is a "password" input) is
//     filled in and the form submitted; redirects are followed back to
//     /auth/callback, which sets the auth_token cookie.
//   - Consent: GET /oauth/authorize shows a form with its hidden inputs (a CSRF
//     token among them) and submit buttons name="action" value="approve" and
//     value="deny" (any name works: the form is posted with the pressed
//     button's name=value). The approver stops at the redirect to the client's
//     redirect_uri and never follows it.
//   - Device: GET /auth/device shows a form with an input named "user_code";
//     submitting it shows a confirmation form with the same approve and deny
//     buttons.
//   - Settings: GET /settings shows the key in the element with id="api-key"
//     (e.g. <code id="api-key">mcpa_…</code>), or in a data-api-key attribute,
//     and a form with a button value="regenerate".
//
// Every hidden input of a form is posted back as it came. Calls are
// serialised: one browser, one user. Use NewFormApprover.
type FormApprover struct {
	base     *url.URL
	username string
	// Password is filled in when the login form has a "password" input.
	Password string
	hc       *http.Client
	sem      chan struct{}

	mu       sync.Mutex
	session  *http.Cookie // auth_token as last set, with its attributes
	sessions int          // times auth_token was set
}

var _ conformance.Approver = (*FormApprover)(nil)
var _ conformance.SessionSource = (*FormApprover)(nil)

// maxPage bounds every page the approver reads, as the suite bounds every
// answer it reads.
const maxPage = 4 << 20

// NewFormApprover returns an approver for the service at baseURL, logging in as
// username. hc supplies the transport and timeout (nil: defaults); the
// approver uses its own cookie jar and redirect handling.
func NewFormApprover(baseURL, username string, hc *http.Client) (*FormApprover, error) {
	base, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("form approver: base URL %q is not absolute", baseURL)
	}
	if username == "" {
		username = "conformance"
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("form approver: %w", err)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	if hc != nil {
		c.Transport, c.Timeout = hc.Transport, hc.Timeout
	}
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &FormApprover{base: base, username: username, hc: c, sem: make(chan struct{}, 1)}, nil
}

func (a *FormApprover) acquire(ctx context.Context) (func(), error) {
	select {
	case a.sem <- struct{}{}:
		return func() { <-a.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// formPage is an HTML page the browser ended on.
type formPage struct {
	URL    *url.URL
	Status int
	*htmlform.Page
}

func (p *formPage) String() string {
	text := ""
	if p.Doc != nil {
		text = p.Text()
	}
	return fmt.Sprintf("%s (HTTP %d: %s)", p.URL, p.Status, text)
}

// request is a navigation: a GET, or a form submission.
type request struct {
	method string
	url    *url.URL
	form   url.Values
}

func submit(f *htmlform.Form, b htmlform.Button, set map[string]string) request {
	v := f.Submission(b, set)
	if f.Method == "GET" {
		u := *f.Action
		u.RawQuery = v.Encode()
		return request{method: "GET", url: &u}
	}
	return request{method: "POST", url: f.Action, form: v}
}

func firstButton(f *htmlform.Form) htmlform.Button {
	if len(f.Buttons) > 0 {
		return f.Buttons[0]
	}
	return htmlform.Button{}
}

// visit navigates like a browser: it follows redirects, logs in when it meets
// a login form, and returns the page it ends on, or the redirect location at
// which stop said to stop.
func (a *FormApprover) visit(ctx context.Context, req request, stop func(*url.URL) bool) (*formPage, *url.URL, error) {
	logins := 0
	for hop := 0; hop < 30; hop++ {
		var body io.Reader
		if req.form != nil {
			body = strings.NewReader(req.form.Encode())
		}
		hr, err := http.NewRequestWithContext(ctx, req.method, req.url.String(), body)
		if err != nil {
			return nil, nil, fmt.Errorf("building %s %s: %w", req.method, req.url, err)
		}
		if req.form != nil {
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		hr.Header.Set("Accept", "text/html")
		resp, err := a.hc.Do(hr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", req.method, req.url, err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
		resp.Body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", req.url, err)
		}
		a.noteSession(resp)
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			next, err := req.url.Parse(loc)
			if err != nil {
				return nil, nil, fmt.Errorf("bad Location %q from %s: %w", loc, req.url, err)
			}
			if (stop != nil && stop(next)) || (next.Scheme != "http" && next.Scheme != "https") {
				return nil, next, nil
			}
			req = request{method: "GET", url: next}
			continue
		}
		p := &formPage{URL: req.url, Status: resp.StatusCode, Page: &htmlform.Page{}}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "" {
			if p.Page, err = htmlform.Parse(req.url, b); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", req.url, err)
			}
		}
		if f := p.FormWithInput("username"); f != nil && logins < 2 {
			logins++
			set := map[string]string{"username": a.username}
			if f.HasInput("password") {
				set["password"] = a.Password
			}
			req = submit(f, firstButton(f), set)
			continue
		}
		return p, nil, nil
	}
	return nil, nil, fmt.Errorf("more than 30 redirects or pages from %s", req.url)
}

func (a *FormApprover) noteSession(resp *http.Response) {
	for _, c := range resp.Cookies() {
		if c.Name == "auth_token" && c.Value != "" && c.MaxAge >= 0 {
			a.mu.Lock()
			a.session, a.sessions = c, a.sessions+1
			a.mu.Unlock()
		}
	}
}

func (a *FormApprover) sessionCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions
}

// stopAt stops at any redirect to redirectURI (scheme, host, port and path;
// the query may differ), so the approver never calls the client's redirect
// URI. The path matters: the client's loopback port can belong, by chance, to
// another listener on this machine (the identity provider, say), whose pages
// the approver must still follow.
func stopAt(redirectURI string) (func(*url.URL) bool, error) {
	r, err := url.Parse(redirectURI)
	if err != nil || r.Host == "" && r.Scheme == "" {
		return nil, fmt.Errorf("authorization URL has no usable redirect_uri (%q)", redirectURI)
	}
	return func(u *url.URL) bool {
		return u.Scheme == r.Scheme && strings.EqualFold(u.Host, r.Host) && u.EscapedPath() == r.EscapedPath()
	}, nil
}

func (a *FormApprover) get(path string) request {
	u, _ := a.base.Parse(a.base.Path + path) // path is a constant of ours
	return request{method: "GET", url: u}
}

// ApproveConsent implements conformance.Approver.
func (a *FormApprover) ApproveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.consent(ctx, authURL, "approve")
}

// Browse is a browser's whole part in a login: it approves authURL's
// consent, then opens the redirect the server ended at (the client's
// loopback callback). Tests use it as mcpauth login's browser.
func (a *FormApprover) Browse(ctx context.Context, authURL string) error {
	callback, err := a.ApproveConsent(ctx, authURL)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, callback.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("opening the callback: %w", err)
	}
	return resp.Body.Close()
}

// DenyConsent implements conformance.Approver.
func (a *FormApprover) DenyConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.consent(ctx, authURL, "deny")
}

func (a *FormApprover) consent(ctx context.Context, authURL, action string) (*url.URL, error) {
	release, err := a.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	stop, err := stopAt(u.Query().Get("redirect_uri"))
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	p, loc, err := a.visit(ctx, request{method: "GET", url: u}, stop)
	if err != nil || loc != nil {
		return loc, err // an error redirect needs no consent
	}
	f, b := p.FormWith(action)
	if f == nil {
		return nil, fmt.Errorf("consent: no form with a %q button at %s", action, p)
	}
	p, loc, err = a.visit(ctx, submit(f, b, nil), stop)
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	if loc == nil {
		return nil, fmt.Errorf("consent: after %s, no redirect to the redirect URI; ended at %s", action, p)
	}
	return loc, nil
}

// ApproveDevice implements conformance.Approver.
func (a *FormApprover) ApproveDevice(ctx context.Context, verificationURI, userCode string) error {
	return a.device(ctx, verificationURI, userCode, "approve")
}

// DenyDevice implements conformance.Approver.
func (a *FormApprover) DenyDevice(ctx context.Context, verificationURI, userCode string) error {
	return a.device(ctx, verificationURI, userCode, "deny")
}

func (a *FormApprover) device(ctx context.Context, verificationURI, userCode, action string) error {
	release, err := a.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	u, err := a.base.Parse(verificationURI)
	if err != nil {
		return fmt.Errorf("device: verification URI: %w", err)
	}
	p, _, err := a.visit(ctx, request{method: "GET", url: u}, nil)
	if err != nil {
		return fmt.Errorf("device: %w", err)
	}
	f, b := p.FormWith(action)
	if f == nil {
		entry := p.FormWithInput("user_code")
		if entry == nil {
			return fmt.Errorf("device: no form with a user_code input at %s", p)
		}
		if p, _, err = a.visit(ctx, submit(entry, firstButton(entry), map[string]string{"user_code": userCode}), nil); err != nil {
			return fmt.Errorf("device: entering the user code: %w", err)
		}
		if f, b = p.FormWith(action); f == nil {
			return fmt.Errorf("device: after entering the user code, no form with a %q button at %s", action, p)
		}
	}
	if p, _, err = a.visit(ctx, submit(f, b, nil), nil); err != nil {
		return fmt.Errorf("device: %s: %w", action, err)
	}
	if p.Status >= 400 {
		return fmt.Errorf("device: %s answered %s", action, p)
	}
	return nil
}

// APIKey implements conformance.Approver: it reads the key from /settings.
func (a *FormApprover) APIKey(ctx context.Context) (string, error) {
	release, err := a.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return a.readKey(ctx)
}

func (a *FormApprover) readKey(ctx context.Context) (string, error) {
	p, _, err := a.visit(ctx, a.get("/settings"), nil)
	if err != nil {
		return "", fmt.Errorf("settings: %w", err)
	}
	k := ""
	if p.Doc != nil {
		k = p.APIKey()
	}
	if k == "" || p.Status != http.StatusOK {
		return "", fmt.Errorf(`settings: no API key (element id="api-key" or data-api-key) at %s`, p)
	}
	return k, nil
}

// RegenerateAPIKey implements conformance.Approver.
func (a *FormApprover) RegenerateAPIKey(ctx context.Context) (string, string, error) {
	release, err := a.acquire(ctx)
	if err != nil {
		return "", "", err
	}
	defer release()
	p, _, err := a.visit(ctx, a.get("/settings"), nil)
	if err != nil {
		return "", "", fmt.Errorf("settings: %w", err)
	}
	old := ""
	if p.Doc != nil {
		old = p.APIKey()
	}
	f, b := p.FormWith("regenerate")
	if old == "" || f == nil {
		return "", "", fmt.Errorf("settings: want the API key and a regenerate button at %s", p)
	}
	if p, _, err = a.visit(ctx, submit(f, b, nil), nil); err != nil {
		return "", "", fmt.Errorf("settings: regenerating: %w", err)
	}
	if p.Status >= 400 {
		return "", "", fmt.Errorf("settings: regenerating answered %s", p)
	}
	next, err := a.readKey(ctx)
	if err != nil {
		return "", "", err
	}
	if next == old {
		return "", "", fmt.Errorf("settings: the key shown after regenerating is unchanged")
	}
	return old, next, nil
}

// Session implements conformance.SessionSource: it logs in unless the jar already holds
// auth_token, and returns the service's cookies.
func (a *FormApprover) Session(ctx context.Context) ([]*http.Cookie, error) {
	release, err := a.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if !a.hasSessionCookie() {
		before := a.sessionCount()
		stop := func(*url.URL) bool { return a.sessionCount() != before }
		p, _, err := a.visit(ctx, a.get("/auth/login?return_to=%2F"), stop)
		if err != nil {
			return nil, fmt.Errorf("login: %w", err)
		}
		if !a.hasSessionCookie() {
			return nil, fmt.Errorf("login: no auth_token cookie was set; ended at %s", p)
		}
	}
	cs := a.hc.Jar.Cookies(a.base)
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, c := range cs {
		if c.Name == "auth_token" && a.session != nil && a.session.Value == c.Value {
			cs[i] = a.session // the same cookie, with the attributes it was set with
		}
	}
	return cs, nil
}

// SignInFrom implements conformance.SignInFollower: a fresh browser (its own cookie
// jar, so the approver's session is untouched) opens path and signs in at
// the identity provider; the response that sets the session cookie is
// intercepted before Go's client parses its Location (a hostile one may not
// parse at all), and that Location is returned raw with the base URL a
// browser would resolve it against.
func (a *FormApprover) SignInFrom(ctx context.Context, path string) (string, *url.URL, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", nil, err
	}
	rec := &signInStop{next: a.hc.Transport}
	if rec.next == nil {
		rec.next = http.DefaultTransport
	}
	hc := *a.hc
	hc.Jar, hc.Transport = jar, rec
	fresh := &FormApprover{base: a.base, username: a.username, Password: a.Password, hc: &hc}
	p, _, err := fresh.visit(ctx, fresh.get(path), nil)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.signedIn {
		if err != nil {
			return "", nil, fmt.Errorf("sign-in from %s: %w", path, err)
		}
		return "", nil, fmt.Errorf("sign-in from %s set no auth_token cookie; ended at %s", path, p)
	}
	return rec.location, a.base, nil
}

// signInStop ends a navigation at the response that sets auth_token,
// keeping its Location as sent.
type signInStop struct {
	next     http.RoundTripper
	mu       sync.Mutex
	signedIn bool
	location string
}

func (s *signInStop) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	for _, c := range resp.Cookies() {
		if c.Name == "auth_token" && c.Value != "" && c.MaxAge >= 0 {
			s.mu.Lock()
			s.signedIn, s.location = true, resp.Header.Get("Location")
			s.mu.Unlock()
			resp.Header.Del("Location") // judged, never followed
		}
	}
	return resp, nil
}

func (a *FormApprover) hasSessionCookie() bool {
	for _, c := range a.hc.Jar.Cookies(a.base) {
		if c.Name == "auth_token" {
			return true
		}
	}
	return false
}
