package approve

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/flows"
)

//go:embed browser_page.js
var pageScript string

// pageState is what inspect (browser_page.js) reads of the page.
type pageState struct {
	URL    string `json:"url"`
	Ready  string `json:"ready"`
	Acted  bool   `json:"acted"` // the approver already acted on this document
	Text   string `json:"text"`
	SignIn *struct {
		InForm   bool   `json:"inForm"`
		Password bool   `json:"password"`
		User     bool   `json:"user"`
		Action   string `json:"action"` // where the form posts
	} `json:"signIn"`
	Press  string `json:"press"`  // the label of the button to press
	Follow string `json:"follow"` // the link to follow
}

func (p *pageState) String() string {
	return fmt.Sprintf("%s (%q)", withoutQuery(p.URL), p.Text)
}

// withoutQuery is a URL without its query: the same sign-in form even
// when the query changes, and never a parameter's value in a message.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

const (
	poll     = 100 * time.Millisecond
	maxSteps = 20 // forms and buttons in one authorization
	// maxSignIns bounds the sign-ins of one authorization (a sign-in page,
	// then an identity provider's), so a wrong password is not tried again
	// and again against an account that locks.
	maxSignIns = 2
	// quiet is how long a loaded page may take to show a form or a button
	// (scripts that render it) before the approver gives up on it.
	quiet = 3 * time.Second
)

// drive opens authURL and signs in, presses and follows until the browser
// goes to the redirect URI.
func (a *BrowserApprover) drive(ctx context.Context, authURL, action string) (*url.URL, error) {
	start, err := url.Parse(authURL)
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") {
		return nil, fmt.Errorf("authorization URL %q is not http or https", authURL)
	}
	server, err := flows.OriginOf(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	redirect, err := url.Parse(start.Query().Get("redirect_uri"))
	if err != nil || redirect.Host == "" {
		return nil, errors.New("the authorization URL has no absolute redirect_uri")
	}
	arrived := a.guard.expect(redirect)
	defer a.guard.expect(nil)

	// From a blank page, every page seen from here on is this request's.
	if err := a.do(ctx, a.opts.Step, chromedp.Navigate("about:blank")); err != nil {
		return nil, fmt.Errorf("opening a blank page: %w", err)
	}
	// No wait for the load: the first answer may already be the redirect,
	// which the guard stops (the navigation then fails, as it should).
	if err := a.do(ctx, a.opts.Step, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: authURL})
		return err
	})); err != nil {
		return nil, fmt.Errorf("opening the authorization URL: %w", err)
	}

	did := "opening the authorization URL"
	signedInTo, tries := "", 0 // where the last sign-in form posted, and how many
	for step := 0; step < maxSteps; step++ {
		st, at, err := a.next(ctx, arrived, action, did)
		if at != nil || err != nil {
			return at, err
		}
		switch {
		case st.SignIn != nil && a.opts.Interactive:
			if at, err := a.awaitPerson(ctx, arrived, action, st); at != nil || err != nil {
				return at, err
			}
			did = "signing in"
			continue
		case st.SignIn != nil:
			if signedInTo == withoutQuery(st.SignIn.Action) || tries == maxSignIns {
				err := fmt.Errorf("the sign-in did not take: after it, the same sign-in form again at %s (wrong user name or password?)", st)
				a.mu.Lock()
				a.refusal = err
				a.mu.Unlock()
				return nil, err
			}
			if err := a.signIn(ctx, server, st); err != nil {
				return nil, err
			}
			signedInTo, tries, did = withoutQuery(st.SignIn.Action), tries+1, "signing in at "+st.String()
		case st.Press != "":
			did = fmt.Sprintf("pressing %q at %s", st.Press, st)
			err = a.eval(ctx, "press()")
		case st.Follow != "":
			did = fmt.Sprintf("following the %s link at %s", action, st)
			err = a.eval(ctx, "follow()")
		default:
			return nil, fmt.Errorf("no sign-in form and no %s button at %s", action, st)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", did, err)
		}
	}
	return nil, fmt.Errorf("%d pages without reaching the redirect URI", maxSteps)
}

// signIn fills and submits the sign-in form, where the rules allow: the
// password goes only to the authorization server's origin, over https or
// to loopback, from a form that posts back to it.
func (a *BrowserApprover) signIn(ctx context.Context, server flows.Origin, st *pageState) error {
	if a.opts.Username == "" {
		return fmt.Errorf("a sign-in page at %s, and %w", st, errNoCredentials)
	}
	if st.SignIn.Password && a.opts.Password == "" {
		return fmt.Errorf("a password form at %s, and no --password", st)
	}
	at, err := credentialOrigin(server, st)
	if err != nil {
		return err
	}
	if st.SignIn.Password {
		a.guard.arm(at)
	}
	args, err := json.Marshal([]string{a.opts.Username, a.opts.Password})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.signIns++
	a.mu.Unlock()
	if err := a.eval(ctx, "signIn(..."+string(args)+")"); err != nil {
		return fmt.Errorf("signing in at %s: %w", st, err)
	}
	return nil
}

// credentialOrigin is the origin the sign-in form of st may send the
// user's credentials to, or why none.
func credentialOrigin(server flows.Origin, st *pageState) (flows.Origin, error) {
	at, err := flows.OriginOf(st.URL)
	if err != nil {
		return at, fmt.Errorf("not signing in at %s: %w", st, err)
	}
	if !st.SignIn.InForm {
		return at, fmt.Errorf("not signing in at %s: its inputs are in no form, so where they go cannot be told", st)
	}
	if to, err := flows.OriginOf(st.SignIn.Action); err != nil || to != at {
		return at, fmt.Errorf("not signing in: the sign-in form at %s posts to %s, another origin", st, origin(parsed(st.SignIn.Action)))
	}
	if !at.Secure() {
		return at, fmt.Errorf("not signing in: the sign-in form at %s is plain http to a host that is not loopback", st)
	}
	if st.SignIn.Password && at != server {
		return at, fmt.Errorf("not sending the password: the sign-in form at %s is not on the authorization server's origin %s (sign in yourself with --headed)", st, origin(parsed(st.URL)))
	}
	return at, nil
}

func parsed(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	return u
}

// awaitPerson waits, up to opts.SignIn, for a person to sign in: for a
// page that is not a sign-in page, or the redirect.
func (a *BrowserApprover) awaitPerson(ctx context.Context, arrived <-chan *url.URL, action string, st *pageState) (*url.URL, error) {
	a.mu.Lock()
	if !a.prompted {
		fmt.Fprintf(a.opts.Prompt, "\nSign in as the test user in the browser window (%s); from then on the suite approves by itself.\n", origin(parsed(st.URL)))
		a.prompted = true
	}
	a.mu.Unlock()
	for n := time.Duration(0); n < a.opts.SignIn; n += poll {
		select {
		case u := <-arrived:
			return u, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a sign-in at %s: %w", st, ctx.Err())
		case <-time.After(poll):
		}
		if now, err := a.inspect(ctx, action); err == nil && now.Ready == "complete" && now.SignIn == nil && now.URL != "about:blank" {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("nobody signed in at %s within %s", st, a.opts.SignIn)
}

// next waits, up to opts.Step, for the redirect or a fresh loaded page with a
// form, a button or a link to act on; a loaded page without one is
// returned once it stayed so for quiet. did says what led here.
func (a *BrowserApprover) next(ctx context.Context, arrived <-chan *url.URL, action string, did string) (*pageState, *url.URL, error) {
	var last *pageState
	still := time.Duration(0)
	for n := time.Duration(0); n < a.opts.Step; n += poll {
		select {
		case u := <-arrived:
			return nil, u, nil
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("after %s: %w", did, ctx.Err())
		default:
		}
		st, err := a.inspect(ctx, action)
		fresh := err == nil && !st.Acted && st.Ready == "complete" && st.URL != "about:blank"
		switch {
		case fresh && (st.SignIn != nil || st.Press != "" || st.Follow != ""):
			return st, nil, nil
		case fresh && still >= quiet:
			return st, nil, nil
		case fresh:
			still += poll
		default:
			still = 0
		}
		if err == nil {
			last = st
		}
		select {
		case u := <-arrived:
			return nil, u, nil
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("after %s: %w", did, ctx.Err())
		case <-time.After(poll):
		}
	}
	where := ""
	if last != nil {
		where = "; the browser is at " + last.String()
	}
	if blocked := a.guard.refused(); len(blocked) > 0 {
		where += "; refused while the password was in the page: " + strings.Join(blocked, ", ")
	}
	return nil, nil, fmt.Errorf("after %s, nothing to act on within %s%s", did, a.opts.Step, where)
}

// inspect reads the page (browser_page.js).
func (a *BrowserApprover) inspect(ctx context.Context, action string) (*pageState, error) {
	c, cancel := a.bound(ctx, a.opts.Step)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[*pageState]("("+pageScript+`).inspect("`+action+`")`))
}

// eval runs one of browser_page.js's acts, e.g. "press()".
func (a *BrowserApprover) eval(ctx context.Context, call string) error {
	return a.do(ctx, a.opts.Step, chromedp.Evaluate[chromedp.Void]("("+pageScript+")."+call))
}

func (a *BrowserApprover) do(ctx context.Context, limit time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	c, cancel := a.bound(ctx, limit)
	defer cancel()
	return chromedp.Do(c, steps...)
}

// bound is the tab's context, ended by ctx or after limit: actions must
// run in the tab's context, and ending it closes nothing.
func (a *BrowserApprover) bound(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(a.tab, limit)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}
