package server_test

// Browser tests of issue 33: the lookalike warning only where a name claims
// someone's identity, and the device confirmation on a 390×844 phone. Each
// saves a screenshot under browsertest.ArtifactsDir (CI keeps them).

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/server/browsertest"
)

// Our own CLI, as it registers itself (its name, a loopback redirect URI),
// gets the plain statement; an impostor calling itself "mcpauth Official
// Login" gets the warning.
func TestChromiumConsentLookalikeWarning(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	for i, tc := range []struct {
		shot, name string
		warn       bool
	}{
		{"consent-cli", "mcpauth CLI", false},
		{"consent-lookalike", "mcpauth Official Login", true},
	} {
		cb := newChrCallback(t)
		_, authURL, _, _ := e.authRequest(cb, tc.name)
		resp := e.open(authURL)
		if i == 0 {
			resp = e.signIn(resp, "olga")
		}
		if resp.Status != http.StatusOK || e.count("#approve") != 1 {
			t.Fatalf("%s: consent page: status %d at %s", tc.name, resp.Status, resp.URL)
		}
		browsertest.Screenshot(t, e.ctx, tc.shot)
		if got := e.visible("#name-like-server"); got != tc.warn {
			t.Errorf("%s: warning visible = %v, want %v", tc.name, got, tc.warn)
		}
		if tc.warn {
			if w := e.text("#name-like-server"); !strings.Contains(w, "claims to be mcpauth") {
				t.Errorf("%s: warning %q does not say whose name it claims", tc.name, w)
			}
			continue
		}
		if f := e.text("#name-fact"); !strings.Contains(f, "chose this name itself") || !strings.Contains(f, cb.Host) {
			t.Errorf("%s: plain statement %q; want who chose the name and where the sign-in returns (%s)", tc.name, f, cb.Host)
		}
	}
}

// chrViewportJS measures what a phone shows without scrolling: the buttons'
// boxes against the viewport, and whether the self-declared badge breaks
// inside a word (a word laid out on two lines has two client rects).
const chrViewportJS = `(() => {
  const out = {innerWidth: innerWidth, innerHeight: innerHeight, scrollY: scrollY, buttons: [], brokenWords: []};
  for (const id of ["approve", "deny"]) {
    const r = document.getElementById(id).getBoundingClientRect();
    out.buttons.push({id: id, left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  }
  const walk = document.createTreeWalker(document.getElementById("self-declared"), NodeFilter.SHOW_TEXT);
  for (let text = walk.nextNode(); text; text = walk.nextNode()) {
    const re = /\S+/g;
    let m;
    while ((m = re.exec(text.textContent)) !== null) {
      const range = document.createRange();
      range.setStart(text, m.index);
      range.setEnd(text, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (tops.size > 1) out.brokenWords.push(m[0]);
    }
  }
  return out;
})()`

type chrViewport struct {
	InnerWidth  float64 `json:"innerWidth"`
	InnerHeight float64 `json:"innerHeight"`
	ScrollY     float64 `json:"scrollY"`
	Buttons     []struct {
		ID                       string
		Left, Top, Right, Bottom float64
	} `json:"buttons"`
	BrokenWords []string `json:"brokenWords"`
}

// On a 390×844 phone the device confirmation's Approve and Deny are on
// screen without scrolling, and the self-declared badge wraps only between
// words.
func TestChromiumDeviceConfirmPhoneViewport(t *testing.T) {
	e := newChrEnv(t, chrOptions{})
	if err := chromedp.Do(e.ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
		t.Fatalf("emulating a phone: %v", err)
	}
	cb := newChrCallback(t)
	for _, name := range []string{"mcpauth CLI", "mcpauth Official Login"} {
		clientID := e.register(map[string]any{"client_name": name, "redirect_uris": []string{cb.URL},
			"grant_types": []string{"authorization_code", chrDeviceGrant}, "response_types": []string{"code"}})
		status, out := e.postJSON("/api/oauth/device/code", map[string]any{"client_id": clientID, "scope": "mcp offline_access"})
		userCode, _ := out["user_code"].(string)
		if status != http.StatusOK || userCode == "" {
			t.Fatalf("device code: %d %v", status, out)
		}
		if resp := e.open(e.url + "/auth/device"); strings.HasPrefix(resp.URL, e.idpURL+"/") {
			e.signIn(resp, "a.person.with.a.long.name@example.com")
		}
		e.typeUserCode(userCode)
		if got := e.text("#user-code"); got != userCode {
			t.Fatalf("%s: confirm page shows %q, want %q", name, got, userCode)
		}
		shot := "device-confirm-390x844-cli"
		if strings.Contains(name, "Official") {
			shot = "device-confirm-390x844-lookalike"
		}
		browsertest.Screenshot(t, e.ctx, shot)
		v, err := chromedp.Run(e.ctx, chromedp.Evaluate[chrViewport](chrViewportJS))
		if err != nil {
			t.Fatalf("measuring: %v", err)
		}
		if v.InnerWidth != 390 || v.InnerHeight != 844 || v.ScrollY != 0 {
			t.Fatalf("%s: viewport %vx%v scrolled %v; want 390x844 at the top", name, v.InnerWidth, v.InnerHeight, v.ScrollY)
		}
		for _, b := range v.Buttons {
			if b.Left < 0 || b.Top < 0 || b.Right > v.InnerWidth || b.Bottom > v.InnerHeight {
				t.Errorf("%s: button #%s at (%v,%v)-(%v,%v); want it inside the 390x844 viewport", name, b.ID, b.Left, b.Top, b.Right, b.Bottom)
			}
		}
		if len(v.BrokenWords) > 0 {
			t.Errorf("%s: the self-declared badge breaks inside %q", name, v.BrokenWords)
		}
	}
}
