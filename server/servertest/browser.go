package servertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/htmlform"
)

// Browser is an HTTP client that behaves like a person's browser towards the
// server and the development identity provider: it keeps cookies, follows
// redirects between the two, fills in the sign-in form and presses buttons.
// It stops at any redirect that leaves them (the client's redirect URI).
type Browser struct {
	Username string
	// CancelSignIn makes the browser press Cancel on the identity
	// provider's sign-in form instead of signing in.
	CancelSignIn bool
	Client       *http.Client
	env          *Env
}

// Page is the last response a Browser read: status, where it ended up,
// headers and body.
type Page struct {
	Status int
	URL    *url.URL
	Header http.Header
	Body   []byte
}

// Browser returns a browser that signs in as username.
func (e *Env) Browser(username string) *Browser {
	jar, _ := cookiejar.New(nil)
	b := &Browser{Username: username, env: e}
	b.Client = &http.Client{
		Jar: jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 20 {
				return errors.New("too many redirects")
			}
			if !e.ours(req.URL) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return b
}

func (e *Env) ours(u *url.URL) bool {
	origin := u.Scheme + "://" + u.Host
	return origin == e.URL || origin == e.IdPURL
}

// Get fetches a page, signing in at the identity provider on the way if the
// server sends it there.
func (b *Browser) Get(ctx context.Context, rawURL string) (*Page, error) {
	p, err := b.do(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	return b.signInIfAsked(ctx, p)
}

// Submit posts the first form on page whose buttons include action, with
// extra fields set, and returns the page it leads to.
func (b *Browser) Submit(ctx context.Context, page *Page, action string, extra url.Values) (*Page, error) {
	hp, err := htmlform.Parse(page.URL, page.Body)
	if err != nil {
		return nil, err
	}
	for _, f := range hp.Forms {
		btn, ok := f.Button(action)
		if action == "" && len(f.Buttons) > 0 {
			btn, ok = f.Buttons[0], true
		}
		if !ok {
			continue
		}
		vals := f.Submission(btn, nil)
		for k, v := range extra {
			vals[k] = v
		}
		p, err := b.do(ctx, http.MethodPost, f.Action.String(), vals)
		if err != nil {
			return nil, err
		}
		return b.signInIfAsked(ctx, p)
	}
	return nil, fmt.Errorf("no form with button %q on %s (status %d)", action, page.URL, page.Status)
}

// signInIfAsked fills in the identity provider's sign-in form.
func (b *Browser) signInIfAsked(ctx context.Context, p *Page) (*Page, error) {
	if !strings.HasPrefix(p.URL.String(), b.env.IdPURL) || !bytes.Contains(p.Body, []byte(`name="username"`)) {
		return p, nil
	}
	if b.CancelSignIn {
		return b.Submit(ctx, p, "cancel", nil)
	}
	return b.Submit(ctx, p, "signin", url.Values{"username": {b.Username}})
}

func (b *Browser) do(ctx context.Context, method, rawURL string, form url.Values) (*Page, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return &Page{Status: resp.StatusCode, URL: b.finalURL(resp), Header: resp.Header, Body: data}, nil
}

// finalURL is where the browser ended up: for a redirect it did not follow
// (one leaving the server), the redirect's target.
func (b *Browser) finalURL(resp *http.Response) *url.URL {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			return loc
		}
	}
	return resp.Request.URL
}

// SignIn signs in through /auth/login.
func (b *Browser) SignIn(ctx context.Context) error {
	p, err := b.Get(ctx, b.env.URL+"/auth/login")
	if err != nil {
		return err
	}
	if p.Status != http.StatusOK {
		return fmt.Errorf("sign-in ended with status %d at %s", p.Status, p.URL)
	}
	return nil
}

// Consent opens an authorization URL, signs in if needed, presses approve
// or deny, and returns where the server sent the browser (the client's
// redirect URI with code or error).
func (b *Browser) Consent(ctx context.Context, authURL, action string) (*url.URL, error) {
	p, err := b.Get(ctx, authURL)
	if err != nil {
		return nil, err
	}
	if p.Status != http.StatusOK {
		return nil, fmt.Errorf("consent page: status %d at %s: %s", p.Status, p.URL, snippet(p.Body))
	}
	p, err = b.Submit(ctx, p, action, nil)
	if err != nil {
		return nil, err
	}
	if b.env.ours(p.URL) {
		return nil, fmt.Errorf("consent did not redirect to the client: status %d at %s: %s", p.Status, p.URL, snippet(p.Body))
	}
	return p.URL, nil
}

// Approve approves the authorization request at authURL and takes the
// browser on to where the server sent it: the client's loopback callback,
// which receives the code as from a person's browser.
func (b *Browser) Approve(ctx context.Context, authURL string) error {
	back, err := b.Consent(ctx, authURL, "approve")
	if err != nil {
		return err
	}
	p, err := b.do(ctx, http.MethodGet, back.String(), nil)
	if err != nil {
		return err
	}
	if p.Status != http.StatusOK {
		return fmt.Errorf("the client's callback answered status %d: %s", p.Status, snippet(p.Body))
	}
	return nil
}

// Device enters userCode at /auth/device and presses action ("approve" or
// "deny"); it returns the final page.
func (b *Browser) Device(ctx context.Context, userCode, action string) (*Page, error) {
	p, err := b.Get(ctx, b.env.URL+"/auth/device")
	if err != nil {
		return nil, err
	}
	p, err = b.Submit(ctx, p, "lookup", url.Values{"user_code": {userCode}})
	if err != nil {
		return nil, err
	}
	if p.Status != http.StatusOK {
		return p, nil
	}
	return b.Submit(ctx, p, action, nil)
}

// APIKey reads the key shown in Settings.
func (b *Browser) APIKey(ctx context.Context) (string, error) {
	p, err := b.Get(ctx, b.env.URL+"/settings")
	if err != nil {
		return "", err
	}
	return apiKey(p)
}

// RegenerateAPIKey presses regenerate in Settings and returns the new key.
func (b *Browser) RegenerateAPIKey(ctx context.Context) (string, error) {
	p, err := b.Get(ctx, b.env.URL+"/settings")
	if err != nil {
		return "", err
	}
	p, err = b.Submit(ctx, p, "regenerate", nil)
	if err != nil {
		return "", err
	}
	return apiKey(p)
}

// apiKey reads the key a Settings page shows.
func apiKey(p *Page) (string, error) {
	hp, err := htmlform.Parse(p.URL, p.Body)
	if err != nil {
		return "", err
	}
	if k := hp.APIKey(); k != "" {
		return k, nil
	}
	return "", fmt.Errorf("no API key on %s (status %d)", p.URL, p.Status)
}

func snippet(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return string(b)
}
