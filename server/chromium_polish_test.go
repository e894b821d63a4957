package server_test

// Browser tests of the pages' polish ("First run and daily use"): the
// self-declared badge stays one box on a desktop, a name claiming someone's
// identity gets the boxed callout, every error page carries its code, the
// request id and a link home, and Settings does not promise a keyring. Each
// saves a screenshot under browsertest.ArtifactsDir (CI keeps them).

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/browsertest"
)

// chrBadgeJS measures the self-declared badge: how many boxes it is laid
// out as, its height, and the height of one line of its text.
const chrBadgeJS = `(() => {
  const el = document.getElementById("self-declared");
  return {boxes: el.getClientRects().length, height: el.getBoundingClientRect().height,
    line: parseFloat(getComputedStyle(el).lineHeight), width: innerWidth};
})()`

type chrBadge struct {
	Boxes  int     `json:"boxes"`
	Height float64 `json:"height"`
	Line   float64 `json:"line"`
	Width  float64 `json:"width"`
}

// At the default 1280 px desktop width the badge is one box on one line,
// after our own CLI's name and after a name too long to leave it room. The
// badge stays for the CLI too: its name is self-declared like any other.
func TestChromiumSelfDeclaredBadgeOneLineOnDesktop(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	for i, name := range []string{"mcpauth CLI", "Weather and calendar assistant", "Team notes sync tool for the office"} {
		cb := newChrCallback(t)
		_, authURL, _, _ := e.authRequest(cb, name)
		resp := e.open(authURL)
		if i == 0 {
			resp = e.signIn(resp, "olga")
		}
		if resp.Status != http.StatusOK || e.count("#approve") != 1 {
			t.Fatalf("%s: consent page: status %d at %s", name, resp.Status, resp.URL)
		}
		browsertest.Screenshot(t, e.ctx, fmt.Sprintf("consent-badge-1280-%d", i))
		b, err := chromedp.Run(e.ctx, chromedp.Evaluate[chrBadge](chrBadgeJS))
		if err != nil {
			t.Fatalf("%s: measuring: %v", name, err)
		}
		if b.Width != 1280 {
			t.Fatalf("%s: window is %v px wide; want the 1280 px desktop", name, b.Width)
		}
		// One line of text plus the badge's border and padding, well under two.
		if b.Boxes != 1 || b.Height > 1.5*b.Line {
			t.Errorf("%s: the badge is %d box(es), %v px tall (a line is %v px); want one box on one line", name, b.Boxes, b.Height, b.Line)
		}
		if got := e.text("#self-declared"); got != "self-declared, not verified" {
			t.Errorf("%s: badge %q", name, got)
		}
	}
}

// The warning about a name that claims a known brand is the same boxed
// callout as the approve warning, not plain text among the facts.
func TestChromiumLookalikeWarningIsACallout(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	cb := newChrCallback(t)
	_, authURL, _, _ := e.authRequest(cb, "Google Drive Sync")
	e.signIn(e.open(authURL), "peggy")
	browsertest.Screenshot(t, e.ctx, "consent-claims-google")
	if w := e.text("#name-like-server"); !strings.Contains(w, "claims to be Google") {
		t.Fatalf("warning %q does not say whose name it claims", w)
	}
	style := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(e.ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`(() => { const s = getComputedStyle(document.querySelector(%q)); return [s.backgroundColor, s.borderLeftStyle, s.borderLeftWidth, s.borderLeftColor].join(" / "); })()`, sel)))
		if err != nil {
			t.Fatalf("styling of %s: %v", sel, err)
		}
		return s
	}
	generic, claim := style("#approve-warning"), style("#name-like-server")
	if claim != generic || !strings.Contains(generic, "solid / 4px") {
		t.Errorf("the claim warning is drawn as %q, the approve warning as %q; want the same boxed callout", claim, generic)
	}
}

// chrHeader is a response header whatever the case of its name.
func chrHeader(resp *network.Response, name string) string {
	for k, v := range resp.Headers {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// checkErrorPage asserts the page the browser shows is the error page
// titled title with its code, the request id of resp and a link home.
func (e *chrEnv) checkErrorPage(resp *network.Response, shot, title, code string) {
	e.t.Helper()
	browsertest.Screenshot(e.t, e.ctx, shot)
	if h := e.text("h1"); h != title {
		e.t.Fatalf("%s: heading %q, want %q", shot, h, title)
	}
	// Counted first: text waits for an element that may never come.
	if e.count("#error-code") != 1 || e.text("#error-code") != code {
		e.t.Errorf("%s: no error code %q on the page", shot, code)
	}
	if id := chrHeader(resp, "X-Request-Id"); id == "" || e.count("#request-id") != 1 || e.text("#request-id") != id {
		e.t.Errorf("%s: the page does not show the response's X-Request-Id %q", shot, id)
	}
	if e.count("#home-link") != 1 || e.attr("#home-link", "href") != "/" || !strings.Contains(e.text("#home-link"), strings.TrimPrefix(e.url, "http://")) {
		e.t.Errorf("%s: no link home naming the server", shot)
	}
}

func TestChromiumSignInFailedPageHasAWayForward(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	// A callback this browser never started a sign-in for.
	resp := e.open(e.url + "/auth/callback?state=forged&code=whatever")
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("callback without a sign-in: status %d, want 400", resp.Status)
	}
	e.checkErrorPage(resp, "error-sign-in-failed", "Sign-in failed", "invalid_request")
}

func TestChromiumTooManyAttemptsPageHasAWayForward(t *testing.T) {
	oneAnHour := server.Limit{Rate: 1.0 / 3600, Burst: 1}
	e := newChrEnv(t, chrOptions{limits: server.Limits{WrongUserCodePerKey: oneAnHour}})
	e.signIn(e.open(e.url+"/auth/device"), "rupert")
	if resp := e.typeUserCode("WXYZ-0000"); resp.Status != http.StatusBadRequest {
		t.Fatalf("first wrong code: status %d, want 400", resp.Status)
	}
	resp := e.typeUserCode("WXYZ-0001")
	if resp.Status != http.StatusTooManyRequests {
		t.Fatalf("second wrong code: status %d, want 429", resp.Status)
	}
	e.checkErrorPage(resp, "error-too-many-attempts", "Too many attempts", "rate_limited")
}

// Settings cannot know where the CLI keeps the key (keyring or file), so it
// names both and the command that tells.
func TestChromiumSettingsDoesNotPromiseAKeyring(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	e.signIn(e.open(e.url+"/settings"), "sybil")
	browsertest.Screenshot(t, e.ctx, "settings")
	got := e.text("#apikey-cli")
	if strings.Contains(got, "kept in your keyring") || !strings.Contains(got, "system keyring, or a file only you can read") || !strings.Contains(got, "mcpauth status") {
		t.Errorf("#apikey-cli = %q; want both places the CLI may keep the key and how to tell which", got)
	}
}
