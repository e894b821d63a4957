// Package approve holds the conformance suite's approvers: what acts as the
// test user in the browser when a check needs a sign-in and a consent.
package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/chromium"
)

// BrowserOptions configure a BrowserApprover.
type BrowserOptions struct {
	// Chromium is the browser binary; empty: $MCPAUTH_CHROMIUM, else
	// chromium (or chromium-browser, google-chrome) on PATH.
	Chromium string
	Getenv   func(string) string // nil: os.Getenv
	// Username and Password sign the test user in through the first
	// sign-in form met; the password goes only to the authorization
	// server's origin, over https or to loopback.
	Username, Password string
	// Interactive leaves every sign-in page to a person, told so on Prompt;
	// the approver presses consent by itself. Headed shows the window.
	Interactive, Headed bool
	Prompt              io.Writer // nil: discarded
	// Step bounds the wait for one page to load and show a form or a
	// button (default 15 s); SignIn the wait for a person to sign in
	// (default 5 min).
	Step, SignIn time.Duration
}

// BrowserApprover acts as the test user in one real Chromium for the whole
// run: it signs in once (by itself, or a person in the window) and the
// browser keeps that session, so every later authorization only meets the
// consent page, where it presses approve or deny. It stops at the
// navigation to the request's redirect_uri, which it intercepts: the code
// never reaches anything listening there. Authorizations run one at a time
// in one tab: one browser, one user. Use NewBrowserApprover; Close stops
// the browser.
type BrowserApprover struct {
	opts  BrowserOptions
	tab   context.Context
	stop  context.CancelFunc
	dir   string
	guard *guard
	sem   chan struct{}

	mu       sync.Mutex
	signIns  int   // sign-in forms submitted
	refusal  error // the sign-in that did not take: never retried
	prompted bool
}

var _ conformance.Approver = (*BrowserApprover)(nil)

// NewBrowserApprover starts Chromium with a fresh profile.
func NewBrowserApprover(opts BrowserOptions) (*BrowserApprover, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Prompt == nil {
		opts.Prompt = io.Discard
	}
	if opts.Step <= 0 {
		opts.Step = 15 * time.Second
	}
	if opts.SignIn <= 0 {
		opts.SignIn = 5 * time.Minute
	}
	bin, err := chromium.Lookup(opts.Chromium, opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("browser approver: %w", err)
	}
	dir, err := os.MkdirTemp("", "mcpauth-approver-")
	if err != nil {
		return nil, fmt.Errorf("browser approver: profile directory: %w", err)
	}
	allocOpts := chromium.Options(bin, dir)
	if opts.Headed {
		allocOpts = append(allocOpts, chromedp.VisibleWindow)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	a := &BrowserApprover{opts: opts, tab: tab, dir: dir, sem: make(chan struct{}, 1),
		stop: func() { cancelTab(); cancelAlloc() }}
	// The first Do starts the browser and binds it to tab: no timeout
	// there (chromedp bounds the start itself).
	if err := chromedp.Do(tab); err != nil {
		a.Close()
		return nil, fmt.Errorf("browser approver: starting %s: %w", bin, err)
	}
	if a.guard, err = startGuard(tab); err != nil {
		a.Close()
		return nil, fmt.Errorf("browser approver: %w", err)
	}
	return a, nil
}

// Close stops the browser and removes its profile, the session with it.
func (a *BrowserApprover) Close() error {
	a.stop()
	return os.RemoveAll(a.dir)
}

// SignIns is how many sign-in forms the approver submitted.
func (a *BrowserApprover) SignIns() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.signIns
}

// ApproveConsent implements conformance.Approver.
func (a *BrowserApprover) ApproveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.authorize(ctx, authURL, "approve")
}

// DenyConsent implements conformance.Approver.
func (a *BrowserApprover) DenyConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.authorize(ctx, authURL, "deny")
}

func (a *BrowserApprover) authorize(ctx context.Context, authURL, action string) (*url.URL, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-a.sem }()
	a.mu.Lock()
	refusal := a.refusal
	a.mu.Unlock()
	if refusal != nil {
		return nil, fmt.Errorf("browser approver: not signing in again: %w", refusal)
	}
	u, err := a.drive(ctx, authURL, action)
	if err != nil {
		return nil, fmt.Errorf("browser approver: %w", err)
	}
	return u, nil
}

const browserScope = "--approve=browser drives authorization requests only; use --approve=form or --approve=manual for "

// ApproveDevice implements conformance.Approver: device codes are out of
// its reach.
func (a *BrowserApprover) ApproveDevice(context.Context, string, string) error {
	return conformance.Skip(browserScope + "device codes")
}

// DenyDevice implements conformance.Approver: out of its reach.
func (a *BrowserApprover) DenyDevice(context.Context, string, string) error {
	return conformance.Skip(browserScope + "device codes")
}

// APIKey implements conformance.Approver: out of its reach.
func (a *BrowserApprover) APIKey(context.Context) (string, error) {
	return "", conformance.Skip(browserScope + "the API key in Settings")
}

// RegenerateAPIKey implements conformance.Approver: out of its reach.
func (a *BrowserApprover) RegenerateAPIKey(context.Context) (string, string, error) {
	return "", "", conformance.Skip(browserScope + "the API key in Settings")
}

// errNoCredentials: a sign-in page, and nobody to sign in.
var errNoCredentials = errors.New("no --username and --password to sign in with (or sign in yourself with --headed)")

// interceptAll pauses every request of the tab for the guard.
var interceptAll = fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}}
