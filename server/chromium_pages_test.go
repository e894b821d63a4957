package server_test

// Browser tests of issue 22: flows that end instead of hanging, and pages a
// keyboard or screen reader user can use.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Cancel at the identity provider's sign-in page answers the pending
// authorization request: the browser lands on the client's redirect URI
// with access_denied, the state and our issuer, at once.
func TestChromiumCancelAtIdentityProvider(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	cb := newChrCallback(t)
	_, authURL, state, _ := e.authRequest(cb, "Cancelled Client")
	at := e.open(authURL)
	if !strings.HasPrefix(at.URL, e.idpURL+"/") {
		t.Fatalf("browser at %s; want the identity provider's sign-in page", at.URL)
	}
	landed := e.click(`button[name=action][value=cancel]`)
	if !strings.HasPrefix(landed.URL, cb.URL+"?") {
		t.Fatalf("after cancelling the browser is at %s (%d); want the client's redirect URI", landed.URL, landed.Status)
	}
	q := cb.query(t)
	if q.Get("error") != "access_denied" || q.Get("state") != state || q.Get("iss") != e.url || q.Has("code") {
		t.Fatalf("callback query %v; want error=access_denied, state %q, iss %q and no code", q, state, e.url)
	}
	// Cancelling started no session.
	if resp := e.open(e.url + "/settings"); !strings.HasPrefix(resp.URL, e.idpURL+"/") {
		t.Fatalf("after a cancelled sign-in /settings is at %s; want the sign-in page", resp.URL)
	}
}

// Browsers get an HTML 404 page; API, OAuth, discovery and MCP paths keep
// their JSON.
func TestChromiumNotFound(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	resp := e.open(e.url + "/no/such/page")
	if resp.Status != http.StatusNotFound || resp.MimeType != "text/html" {
		t.Fatalf("/no/such/page: %d %s; want a 404 HTML page", resp.Status, resp.MimeType)
	}
	if h := e.text("h1"); h != "Page not found" {
		t.Fatalf("404 heading %q", h)
	}
	if e.count(`a[href="/"]`) == 0 {
		t.Fatal("the 404 page has no link home")
	}
	for _, p := range []string{"/api/nothing", "/oauth/nothing", "/.well-known/nothing", "/mcp/nothing"} {
		resp := e.open(e.url + p)
		if resp.Status != http.StatusNotFound || resp.MimeType != "application/json" {
			t.Fatalf("%s: %d %s; want a JSON 404", p, resp.Status, resp.MimeType)
		}
	}
}

// Sign-out is reachable from the home page and Settings, and its
// confirmation page has a Cancel that keeps the session.
func TestChromiumSignOutWithCancel(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	e.signIn(e.open(e.url+"/settings"), "ivan")
	if e.count(`#logout[href="/auth/logout"]`) != 1 {
		t.Fatal("Settings has no Sign out leading to the confirmation")
	}
	e.open(e.url + "/")
	if got := e.click("#logout-link"); got.URL != e.url+"/auth/logout" {
		t.Fatalf("home's Sign out went to %s", got.URL)
	}
	if got := e.click("#cancel"); got.URL != e.url+"/" || e.count("#logout-link") != 1 {
		t.Fatalf("Cancel went to %s; want home, still signed in", got.URL)
	}
	e.click("#logout-link")
	e.click("#logout")
	if e.count("#signed-out") != 1 {
		t.Fatal("no signed-out page after confirming")
	}
	if resp := e.open(e.url + "/settings"); !strings.HasPrefix(resp.URL, e.idpURL+"/") {
		t.Fatalf("after signing out /settings is at %s; want the sign-in page", resp.URL)
	}
}

// chrA11yJS reports, for every rendered control, the contrast of its border
// against what is behind it (WCAG 2.2 SC 1.4.11 wants 3:1).
const chrA11yJS = `(() => {
  const rgb = s => { const m = s.match(/[\d.]+/g).map(Number); return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const behind = el => { for (let p = el.parentElement; p; p = p.parentElement) { const c = rgb(getComputedStyle(p).backgroundColor); if (c.a > 0) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const out = [];
  for (const el of document.querySelectorAll("button, input[type=text], a.button, summary")) {
    if (!el.checkVisibility()) continue;
    const st = getComputedStyle(el), bg = rgb(st.backgroundColor), outer = behind(el), border = rgb(st.borderTopColor);
    // A filled control is told apart by its fill, an outlined one by its border.
    const best = Math.max(ratio(border, outer), bg.a > 0 ? ratio(bg, outer) : 0);
    out.push({id: el.id || el.name || el.tagName, ratio: best});
  }
  return out;
})()`

type chrContrast struct {
	ID    string  `json:"id"`
	Ratio float64 `json:"ratio"`
}

// checkControls asserts every control's edge stands out at 3:1, and that
// Tab reaches a control that shows a focus ring.
func (e *chrEnv) checkControls(page string) {
	e.t.Helper()
	got, err := chromedp.Run(e.ctx, chromedp.Evaluate[[]chrContrast](chrA11yJS))
	if err != nil {
		e.t.Fatalf("%s: measuring: %v", page, err)
	}
	if len(got) == 0 {
		e.t.Fatalf("%s: no controls found", page)
	}
	for _, c := range got {
		if c.Ratio < 3 {
			e.t.Errorf("%s: control %s stands out from its background at %.2f:1; want 3:1", page, c.ID, c.Ratio)
		}
	}
	// Tab to the first control and read its focus ring.
	if _, err := chromedp.Run(e.ctx, chromedp.Evaluate[bool]("(document.activeElement && document.activeElement.blur(), true)")); err != nil {
		e.t.Fatalf("%s: blurring: %v", page, err)
	}
	if err := chromedp.Do(e.ctx, chromedp.KeyEvent("\t")); err != nil {
		e.t.Fatalf("%s: pressing Tab: %v", page, err)
	}
	ring, err := chromedp.Run(e.ctx, chromedp.Evaluate[string](`(() => { const a = document.activeElement; if (!a || a === document.body) return "nothing focused"; const s = getComputedStyle(a); return a.tagName + " " + s.outlineStyle + " " + s.outlineWidth; })()`))
	if err != nil {
		e.t.Fatalf("%s: reading focus: %v", page, err)
	}
	if f := strings.Fields(ring); len(f) != 3 || f[1] == "none" || f[2] == "0px" {
		e.t.Errorf("%s: after Tab the focused element shows %q; want a visible outline", page, ring)
	}
}

func TestChromiumControlsContrastAndFocus(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	cb := newChrCallback(t)
	_, authURL, _, _ := e.authRequest(cb, "Contrast Client")
	e.signIn(e.open(authURL), "judy")
	e.checkControls("consent")
	e.open(e.url + "/auth/device")
	e.checkControls("device-enter")
	e.open(e.url + "/settings")
	e.checkControls("settings")
	e.press("#regenerate-start")
	e.checkControls("settings-regenerate")
	e.open(e.url + "/auth/logout")
	e.checkControls("logout")
}
