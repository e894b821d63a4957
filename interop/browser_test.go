package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/htmlform"
)

// The lab's browser: a person without JavaScript who signs in with any
// name and approves whatever is asked. mcpauth login runs this test binary
// as its browser (MCPAUTH_BROWSER) with browserEnv set to a log file; init
// then drives the page at the URL it was given and exits before any test
// runs.
const browserEnv = "MCPAUTH_INTEROP_BROWSER"

// serveBrowserEnv, set beside browserEnv, makes the browser the one for the
// reference server's own pages (the conformance suite's form approver),
// signed in as alice.
const serveBrowserEnv = "MCPAUTH_INTEROP_SERVE_BROWSER"

func init() {
	logPath := os.Getenv(browserEnv)
	if logPath == "" {
		return
	}
	authURL := os.Args[len(os.Args)-1]
	browser := func(authURL string) (*url.URL, error) { return browse(authURL, nil, 30*time.Second) }
	if os.Getenv(serveBrowserEnv) != "" {
		browser = approveAtServe
	}
	callback, err := browser(authURL)
	msg := fmt.Sprintf("opened %s\ncallback %v\n", authURL, callback)
	code := 0
	if err != nil {
		msg += fmt.Sprintf("error: %v\n", err)
		code = 1
	}
	_ = os.WriteFile(logPath, []byte(msg), 0o600)
	os.Exit(code)
}

// approveAtServe approves authURL at the reference server's pages and
// opens the client's callback.
func approveAtServe(authURL string) (*url.URL, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	a, err := approve.NewFormApprover(u.Scheme+"://"+u.Host, "alice", nil)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	callback, err := a.ApproveConsent(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(callback.String())
	if err != nil {
		return callback, fmt.Errorf("browser: opening the callback: %w", err)
	}
	return callback, resp.Body.Close()
}

// browse opens start and keeps submitting the page's form, filling fields
// from signIn and fill, until a request goes to the client's callback (its
// loopback redirect_uri, which is then requested as a browser would and
// returned; the pages may be on other origins than the AS's, as Hydra's
// login and consent app), or a page has no form left
// (the end of a device flow: nil, nil). Bounded to 12 pages.
func browse(start string, fill map[string]string, timeout time.Duration) (*url.URL, error) {
	first, err := url.Parse(start)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	var callback *url.URL
	// The client's callback is the request's redirect_uri; without one
	// (the device flow's page), any other origin than the AS's.
	isCallback := func(u *url.URL) bool { return u.Host != first.Host }
	if r, err := url.Parse(first.Query().Get("redirect_uri")); err == nil && r.Host != "" {
		isCallback = func(u *url.URL) bool { return u.Scheme == r.Scheme && u.Host == r.Host && u.Path == r.Path }
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		if callback == nil && isCallback(req.URL) {
			callback = req.URL
		}
		return nil
	}}
	// What it types into sign-in forms: any user with any password, as the
	// development pages of every AS in the lab accept.
	signIn := map[string]string{"login": "alice", "password": "alice-password", "username": "alice"}
	req, _ := http.NewRequest(http.MethodGet, start, nil)
	for range 12 {
		resp, err := hc.Do(req)
		if err != nil {
			return callback, fmt.Errorf("browser: %w", err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if callback != nil {
			if resp.StatusCode >= 400 {
				return callback, fmt.Errorf("browser: the callback answered %s: %s", resp.Status, snippet(body))
			}
			return callback, nil
		}
		if resp.StatusCode >= 400 {
			return nil, fmt.Errorf("browser: %s answered %s: %s", resp.Request.URL, resp.Status, snippet(body))
		}
		page, err := htmlform.Parse(resp.Request.URL, body)
		if err != nil {
			return nil, fmt.Errorf("browser: %s: %w", resp.Request.URL, err)
		}
		form := approveForm(page)
		if form == nil {
			return nil, nil
		}
		set := map[string]string{}
		for k, v := range signIn {
			if form.HasInput(k) {
				set[k] = v
			}
		}
		for k, v := range fill {
			if form.HasInput(k) {
				set[k] = v
			}
		}
		button := htmlform.Button{}
		for _, b := range form.Buttons {
			if b.Name != "" && isApproval(b.Value) {
				button = b
			}
		}
		values := form.Submission(button, set)
		if form.Method == http.MethodGet {
			u := *form.Action
			u.RawQuery = values.Encode()
			req, _ = http.NewRequest(http.MethodGet, u.String(), nil)
			continue
		}
		req, _ = http.NewRequest(http.MethodPost, form.Action.String(), strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return nil, errors.New("browser: still on the authorization server after 12 pages")
}

// approveForm picks the form a person approving would submit: not one
// that aborts, cancels or denies.
func approveForm(p *htmlform.Page) *htmlform.Form {
	for _, f := range p.Forms {
		aborts := f.HasInput("abort") || f.Action != nil && strings.Contains(f.Action.Path, "abort")
		if len(f.Buttons) > 0 {
			switch strings.ToLower(f.Buttons[0].Value) {
			case "cancel", "deny", "abort":
				aborts = true
			}
		}
		if !aborts {
			return f
		}
	}
	return nil
}

func isApproval(v string) bool {
	switch strings.ToLower(v) {
	case "approve", "allow", "yes", "continue", "grant", "accept":
		return true
	}
	return false
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
