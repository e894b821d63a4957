package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// How the mcp profile judges an authorization request that must be
// refused. A refusal is a 4xx page, or a redirect carrying error= (to the
// request's redirect URI, in the query or, for the implicit grant's
// response mode, the fragment; or to a page of the authorization server's
// own). Servers often show their error page a redirect or two away, so the
// server's own redirects are followed, within the authorization endpoint's
// origin and a few hops; a page there (sign-in, consent, or an error shown
// as 200) is seen through by the approver.

// maxAuthHops bounds the redirects followed within the authorization
// endpoint's origin.
const maxAuthHops = 5

type authOutcome int

const (
	outcomePage        authOutcome = iota // a page, or a redirect off the server: the approver must look further
	outcomeRefused                        // a 4xx page or an error= redirect (or a redirect back without a code)
	outcomeGranted                        // a code or an access token at the redirect URI
	outcomeForbidden                      // a redirect to the URI that must never get one
	outcomeServerError                    // a 5xx: neither a refusal nor a grant
)

// authAnswer is what an authorization request came to, and what was seen.
type authAnswer struct {
	outcome authOutcome
	seen    string
}

// responseParams are an authorization response's parameters: the query's,
// then the fragment's.
func responseParams(u *url.URL) url.Values {
	p := u.Query()
	if f, err := url.ParseQuery(u.Fragment); err == nil {
		for k, vs := range f {
			if !p.Has(k) {
				p[k] = vs
			}
		}
	}
	return p
}

// readRedirect judges a redirect to loc, when it says something: to
// forbidden (a URI that must get nothing), to the request's redirect URI,
// or to an error page of the authorization server (at asOrigin).
func readRedirect(loc *url.URL, redirect, forbidden, asOrigin string) (authAnswer, bool) {
	p := responseParams(loc)
	switch {
	case forbidden != "" && sameEndpoint(loc, forbidden):
		return authAnswer{outcomeForbidden, redact.ElideGrants(loc)}, true
	case sameEndpoint(loc, redirect) && (p.Get("code") != "" || p.Get("access_token") != ""):
		return authAnswer{outcomeGranted, redact.ElideGrants(loc)}, true
	case sameEndpoint(loc, redirect), origin(loc) == asOrigin && p.Get("error") != "":
		return authAnswer{outcomeRefused, "a redirect to " + redact.ElideGrants(loc)}, true
	}
	return authAnswer{}, false
}

// firstAnswer sends authURL as a browser would (with the session when
// there is one), follows the authorization server's own redirects, and
// reads where they end, without an approver.
func (e *Env) firstAnswer(ctx context.Context, authURL, forbidden string) (authAnswer, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return authAnswer{}, setupFail("building an authorization request", err)
	}
	redirect, asOrigin := au.Query().Get("redirect_uri"), origin(au)
	// The cookies the chain sets go with its next hops, as a browser's
	// would: servers keep the interaction in one (node-oidc-provider's
	// sign-in page is an error page without it). All hops are asOrigin's.
	var jar []*http.Cookie
	if e.target.hasSession() {
		if cs, err := e.SessionCookies(ctx); err == nil {
			jar = cs
		}
	}
	next := authURL
	for hop := 0; ; hop++ {
		hdr := []string{"Accept", "text/html"}
		if len(jar) > 0 {
			hdr = append(hdr, "Cookie", cookieHeader(jar))
		}
		r, err := e.Get(ctx, next, hdr...)
		if err != nil {
			return authAnswer{}, err
		}
		jar = setCookies(jar, r.Header)
		switch {
		case r.Status >= 500:
			return authAnswer{outcomeServerError, r.Snippet()}, nil
		case r.Status >= 400:
			return authAnswer{outcomeRefused, r.Snippet()}, nil
		}
		loc, err := location(r)
		if err != nil {
			return authAnswer{outcomePage, r.Snippet()}, nil
		}
		if a, ok := readRedirect(loc, redirect, forbidden, asOrigin); ok {
			return a, nil
		}
		if origin(loc) != asOrigin || hop == maxAuthHops {
			return authAnswer{outcomePage, "a redirect to " + redact.ElideGrants(loc)}, nil
		}
		next = loc.String()
	}
}

// setCookies is jar with the cookies h sets, replacing those of the same
// name (an expired one is dropped).
func setCookies(jar []*http.Cookie, h http.Header) []*http.Cookie {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		jar = slices.DeleteFunc(jar, func(old *http.Cookie) bool { return old.Name == c.Name })
		if c.MaxAge >= 0 && c.Value != "" {
			jar = append(jar, c)
		}
	}
	return jar
}

// authorizationAnswer is firstAnswer, with a page seen through by the
// approver (approving, so that a grant shows).
func (e *Env) authorizationAnswer(ctx context.Context, authURL, forbidden string) (authAnswer, error) {
	a, err := e.firstAnswer(ctx, authURL, forbidden)
	if err != nil || a.outcome != outcomePage {
		return a, err
	}
	if e.target.Approver == nil {
		return a, Skip("the server shows a page or asks for sign-in before judging the request: needs an approver (--approve=browser, --approve=form, --approve=manual or --browser-command)")
	}
	e.approving.Add(1)
	loc, err := e.approver().ApproveConsent(ctx, authURL)
	e.approving.Add(-1)
	if err != nil {
		if ctx.Err() != nil {
			return a, ctx.Err()
		}
		return a, &InconclusiveError{Reason: "could not see past the sign-in page to tell whether the request is refused: " + err.Error(),
			Flag: "--browser-command or --approve=manual"}
	}
	au, _ := url.Parse(authURL)
	if b, ok := readRedirect(loc, au.Query().Get("redirect_uri"), forbidden, origin(au)); ok {
		return b, nil
	}
	return authAnswer{outcomeRefused, "sent to " + redact.ElideGrants(loc)}, nil // elsewhere: not a grant
}

// wantAuthorizationRefused judges an authorization request that must be
// refused: no code is ever issued for it, and when forbidden is set (an
// unregistered redirect URI) nothing is sent there, not even an error.
func (e *Env) wantAuthorizationRefused(ctx context.Context, authURL, forbidden string) error {
	a, err := e.authorizationAnswer(ctx, authURL, forbidden)
	if err != nil {
		return err
	}
	switch a.outcome {
	case outcomeForbidden:
		return Fail("the server redirected to the unregistered redirect URI: %s", a.seen)
	case outcomeGranted:
		return Fail("want the request refused, got a grant: %s", a.seen)
	}
	return nil // refused, or a server error: nothing sent where it must not go
}

// wantFaultRefused judges a request that carries one fault and must be
// refused for it. A refusal counts only when the control (the same request
// without the fault) is not refused too: a server that refuses both says
// nothing about the fault, and the check is inconclusive.
func (e *Env) wantFaultRefused(ctx context.Context, faulty, control string) error {
	a, err := e.authorizationAnswer(ctx, faulty, "")
	if err != nil {
		return err
	}
	switch a.outcome {
	case outcomeGranted:
		return Fail("want the request refused, got a grant: %s", a.seen)
	case outcomeServerError:
		return &InconclusiveError{Reason: "the server answered " + a.seen + ": a server error, neither a refusal nor a grant"}
	}
	// The control's first answers suffice: a sign-in or consent page is
	// what a good request gets, and sending it through the approver as
	// well would cost a sign-in per check (and trip rate limits).
	c, err := e.firstAnswer(ctx, control, "")
	if err != nil {
		return err
	}
	if c.outcome != outcomeGranted && c.outcome != outcomePage {
		return &InconclusiveError{Reason: fmt.Sprintf("the control request (the same request without the fault) was not granted either (%s), "+
			"so the refusal (%s) says nothing about the fault", c.seen, a.seen)}
	}
	return nil
}

// mcpRefusal is a check that an authorization request edited by edit is
// refused. edit returns forbidden, as for wantAuthorizationRefused; when it
// returns "", the edit is a fault in a request that is otherwise good, and
// the unedited request is its control (wantFaultRefused).
func mcpRefusal(id, area, title, source string, sev Severity, edit func(e *Env, q url.Values) (forbidden string)) Check {
	c := mcpCheck(id, area, title, source, sev, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
		g, err := e.mcpRequest(ctx, s, "", s.scope())
		if err != nil {
			return err
		}
		forbidden := ""
		control := g.req.URL()
		authURL := editQuery(control, func(q url.Values) { forbidden = edit(e, q) })
		if forbidden != "" {
			return e.wantAuthorizationRefused(ctx, authURL, forbidden)
		}
		return e.wantFaultRefused(ctx, authURL, control)
	})
	c.SignsIn = true // the approver sees past a sign-in page
	return c
}
