// Command formlogin is an example browser driver for
// `mcpauth conformance --browser-command` (and `mcpauth login
// --browser-command`): it signs a test user in through a plain HTML
// username/password form and presses the consent form's approve (or deny)
// button, like a browser without JavaScript, until the authorization server
// redirects to the request's redirect_uri; it then follows that redirect
// when it is on loopback (so the suite's listener receives it), and prints
// it on stdout. Diagnostics go to stderr (the suite puts their end in the
// check's reason); the password is never printed, and goes only back to
// the origin of the sign-in page, over https or to loopback.
//
//	go build -o formlogin ./conformance/drivers/formlogin
//	MCPAUTH_DRIVER_USERNAME=alice MCPAUTH_DRIVER_PASSWORD=… \
//	  mcpauth conformance --profile mcp https://mcp.example.com/mcp --browser-command ./formlogin
//
// Pages it understands: a form with a password input, or with an input
// named username, user, login, email or identifier, is a sign-in form (the
// first text or email input gets the user name, every password input the
// password); a form with a submit button whose name, value or label says
// approve, allow, accept, authorize, consent, continue or yes (deny, cancel,
// reject, decline or no with MCPAUTH_CONFORMANCE_ACTION=deny) is a consent
// form; on a page without one, a link whose whole text is such a word
// ("[ Cancel ]", as node-oidc-provider's pages deny) is followed. Pages
// that need JavaScript need a real browser: write the same contract with
// Playwright, chromedp or Selenium.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/htmlform"
)

const (
	maxHops  = 30
	maxBody  = 1 << 20
	maxLogin = 3
)

var (
	userNames = regexp.MustCompile(`(?i)^(username|user|login|email|identifier|user_?name)$`)
	approve   = regexp.MustCompile(`(?i)\b(approve|allow|accept|authori[sz]e|consent|continue|yes|grant)\b`)
	deny      = regexp.MustCompile(`(?i)\b(deny|cancel|reject|decline|no)\b`)
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: formlogin <authorization-url> (user from MCPAUTH_DRIVER_USERNAME and MCPAUTH_DRIVER_PASSWORD)")
		os.Exit(2)
	}
	d := driver{user: os.Getenv("MCPAUTH_DRIVER_USERNAME"), password: os.Getenv("MCPAUTH_DRIVER_PASSWORD"), button: approve}
	if os.Getenv("MCPAUTH_CONFORMANCE_ACTION") == "deny" {
		d.button = deny
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u, err := d.run(ctx, os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "formlogin:", err)
		os.Exit(1)
	}
	fmt.Println(u)
}

type driver struct {
	user, password string
	button         *regexp.Regexp
}

// run navigates from authURL to the redirect and returns the redirect URL.
func (d driver) run(ctx context.Context, authURL string) (string, error) {
	start, err := url.Parse(authURL)
	if err != nil {
		return "", fmt.Errorf("authorization URL: %w", err)
	}
	redirect, err := url.Parse(start.Query().Get("redirect_uri"))
	if err != nil || redirect.Host == "" {
		return "", errors.New("the authorization URL has no absolute redirect_uri")
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	method, target, form := http.MethodGet, start, url.Values(nil)
	logins := 0
	for hop := 0; hop < maxHops; hop++ {
		status, loc, body, ctype, err := send(ctx, hc, method, target, form)
		if err != nil {
			return "", err
		}
		if loc != "" && status >= 300 && status < 400 {
			next, err := target.Parse(loc)
			if err != nil {
				return "", fmt.Errorf("bad Location %q: %w", loc, err)
			}
			if next.Scheme == redirect.Scheme && next.Host == redirect.Host && next.Path == redirect.Path {
				// Deliver it as the browser would when the client listens on
				// loopback; a code is never carried anywhere else.
				if h := next.Hostname(); h == "127.0.0.1" || h == "::1" || h == "localhost" {
					_, _, _, _, _ = send(ctx, hc, http.MethodGet, next, nil)
				}
				return next.String(), nil
			}
			method, target, form = http.MethodGet, next, nil
			continue
		}
		if status != http.StatusOK || (ctype != "text/html" && ctype != "") {
			return "", fmt.Errorf("%s %s: HTTP %d %s", method, target, status, ctype)
		}
		page, err := htmlform.Parse(target, body)
		if err != nil {
			return "", fmt.Errorf("%s: %w", target, err)
		}
		if f := signInForm(page); f != nil && logins < maxLogin {
			if err := credentialTarget(target, f.Action); err != nil {
				return "", err
			}
			logins++
			method, target, form = submission(f, firstButton(f), d.credentials(f))
			continue
		}
		if f, b := d.consentForm(page); f != nil {
			method, target, form = submission(f, b, nil)
			continue
		}
		// Not on a sign-in page: a sign-in that did not take is reported,
		// not cancelled.
		if l, ok := d.choiceLink(page); ok && signInForm(page) == nil {
			method, target, form = http.MethodGet, l.URL, nil
			continue
		}
		return "", fmt.Errorf("no sign-in or consent form at %s: %.200s", target, strings.Join(strings.Fields(page.Text()), " "))
	}
	return "", fmt.Errorf("more than %d pages without reaching %s", maxHops, redirect)
}

// send is one navigation; a 429 with a short Retry-After is waited out and
// tried again, a few times, as a person would reload the page.
func send(ctx context.Context, hc *http.Client, method string, u *url.URL, form url.Values) (status int, loc string, body []byte, ctype string, err error) {
	for attempt := 0; ; attempt++ {
		var wait string
		status, loc, body, ctype, wait, err = sendOnce(ctx, hc, method, u, form)
		secs, convErr := strconv.Atoi(wait)
		if err != nil || status != http.StatusTooManyRequests || convErr != nil || secs > 30 || attempt == 3 {
			return status, loc, body, ctype, err
		}
		select {
		case <-ctx.Done():
			return 0, "", nil, "", ctx.Err()
		case <-time.After(time.Duration(secs)*time.Second + 100*time.Millisecond):
		}
	}
}

func sendOnce(ctx context.Context, hc *http.Client, method string, u *url.URL, form url.Values) (status int, loc string, body []byte, ctype, retryAfter string, err error) {
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, "", nil, "", "", fmt.Errorf("building %s %s: %w", method, u, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, "", "", err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, "", nil, "", "", fmt.Errorf("reading %s: %w", u, err)
	}
	ctype, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode, resp.Header.Get("Location"), body, ctype, resp.Header.Get("Retry-After"), nil
}

// credentialTarget refuses a sign-in form that would carry the password
// off the origin of the page it is on, or in clear text: the page's origin
// (the authorization server's, or the identity provider it sent the
// browser to) must be https or loopback, and the form must post back to it.
func credentialTarget(page, action *url.URL) error {
	po, err := flows.OriginOf(page.String())
	if err != nil {
		return fmt.Errorf("not posting the password from %s: %w", page.Redacted(), err)
	}
	if ao, err := flows.OriginOf(action.String()); err != nil || ao != po {
		return fmt.Errorf("not posting the password: the sign-in form at %s posts to %s, another origin", po, action.Redacted())
	}
	if !po.Secure() {
		return fmt.Errorf("not posting the password: the sign-in form at %s is plain http to a host that is not loopback", po)
	}
	return nil
}

// signInForm is the page's form with a password input or a user name input.
func signInForm(p *htmlform.Page) *htmlform.Form {
	for _, f := range p.Forms {
		for name, typ := range f.Types {
			if typ == "password" || (userNames.MatchString(name) && (typ == "text" || typ == "email")) {
				return f
			}
		}
	}
	return nil
}

// credentials fills the first text or email input (preferring one with a
// user-like name) and every password input.
func (d driver) credentials(f *htmlform.Form) map[string]string {
	set := map[string]string{}
	user := ""
	for name, typ := range f.Types {
		switch {
		case typ == "password":
			set[name] = d.password
		case (typ == "text" || typ == "email") && (user == "" || userNames.MatchString(name)):
			user = name
		}
	}
	if user != "" {
		set[user] = d.user
	}
	return set
}

// consentForm is the first form with a button for the wanted action.
func (d driver) consentForm(p *htmlform.Page) (*htmlform.Form, htmlform.Button) {
	for _, f := range p.Forms {
		for _, b := range f.Buttons {
			if d.button.MatchString(b.Value) || d.button.MatchString(b.Label) || (b.Value == "" && d.button.MatchString(b.Name)) {
				return f, b
			}
		}
	}
	return nil, htmlform.Button{}
}

// choiceLink is the first link whose whole text, brackets and punctuation
// aside, is a word for the wanted action: some pages cancel with a link,
// not a button. Only the whole text counts, so "Read about consent" is no
// approval.
func (d driver) choiceLink(p *htmlform.Page) (htmlform.Link, bool) {
	for _, l := range p.Links {
		label := strings.TrimFunc(l.Label, func(r rune) bool { return !unicode.IsLetter(r) })
		if label != "" && d.button.FindString(label) == label {
			return l, true
		}
	}
	return htmlform.Link{}, false
}

func firstButton(f *htmlform.Form) htmlform.Button {
	if len(f.Buttons) > 0 {
		return f.Buttons[0]
	}
	return htmlform.Button{}
}

func submission(f *htmlform.Form, b htmlform.Button, set map[string]string) (string, *url.URL, url.Values) {
	v := f.Submission(b, set)
	if f.Method == http.MethodGet {
		u := *f.Action
		u.RawQuery = v.Encode()
		return http.MethodGet, &u, nil
	}
	return http.MethodPost, f.Action, v
}
