package approve

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/flows"
)

// guard sees every request of the tab before it leaves the browser (the
// DevTools Fetch domain): it stops the navigation to the redirect URI, so
// the approver takes the code from there and nothing listening on that
// port gets it, and while a password is in a page it lets no request go to
// another origin, whatever the page's scripts do with the password.
type guard struct {
	tab context.Context

	mu       sync.Mutex
	redirect *url.URL      // the waiting request's redirect URI
	arrived  chan *url.URL // where the browser went there
	armed    *flows.Origin // the only origin while a password is in the page
	blocked  []string      // requests refused while armed
}

func startGuard(tab context.Context) (*guard, error) {
	g := &guard{tab: tab}
	paused := chromedp.Events(tab, fetch.RequestPaused) // subscribed before Enable
	// A new document in the main frame is a new page: the one the
	// password was typed into, and its scripts, are gone.
	err := chromedp.Listen(tab, func(ev any) {
		if nav, ok := ev.(*page.EventFrameNavigated); ok && nav.Frame != nil && nav.Frame.ParentID == "" {
			g.mu.Lock()
			g.armed = nil
			g.mu.Unlock()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("watching navigations: %w", err)
	}
	if _, err := chromedp.Call(tab, fetch.Enable, interceptAll); err != nil {
		return nil, fmt.Errorf("intercepting requests: %w", err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return // the browser is gone
			}
			g.decide(ev)
		}
	}()
	return g, nil
}

// expect makes redirect the redirect URI to stop at, and returns the
// channel its arrival comes on; nil stops expecting.
func (g *guard) expect(redirect *url.URL) <-chan *url.URL {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.redirect, g.arrived = redirect, make(chan *url.URL, 1)
	return g.arrived
}

// arm lets requests go only to origin until the next document.
func (g *guard) arm(origin flows.Origin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.blocked = &origin, nil
}

// refused are the requests the guard refused since the last arm.
func (g *guard) refused() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.blocked...)
}

func (g *guard) decide(ev fetch.EventRequestPaused) {
	raw := ""
	if ev.Request != nil {
		raw = ev.Request.URL + ev.Request.URLFragment
	}
	u, err := url.Parse(raw)
	g.mu.Lock()
	stop := err == nil && g.redirect != nil && atRedirect(u, g.redirect)
	if stop {
		select {
		case g.arrived <- u:
		default: // a second arrival for the same request: the first counts
		}
	}
	block := !stop && g.armed != nil && (err != nil || !g.armed.Holds(u))
	if block && len(g.blocked) < 8 {
		g.blocked = append(g.blocked, ev.Request.Method+" "+origin(u))
	}
	g.mu.Unlock()
	if stop || block {
		_, _ = chromedp.Call(g.tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = chromedp.Call(g.tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
}

// atRedirect: u is redirect (scheme, host and path) with any query, or a
// path under it: a server that redirects to an extended redirect URI
// (/callback/extra) is stopped there too, for the check to judge. Other
// paths on the same port are followed: the port may, by chance, be
// another listener's, the identity provider's say.
func atRedirect(u, redirect *url.URL) bool {
	if u.Scheme != redirect.Scheme || !strings.EqualFold(u.Host, redirect.Host) {
		return false
	}
	p, rp := u.EscapedPath(), redirect.EscapedPath()
	return p == rp || strings.HasPrefix(p, strings.TrimSuffix(rp, "/")+"/")
}

// origin is how a refused request is named: its origin, never its query.
func origin(u *url.URL) string {
	if u == nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
