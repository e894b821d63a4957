package conformance

import (
	"context"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/htmlform"
)

// getAuthorize sends GET /oauth/authorize with q, as a logged-in browser when
// withSession and a session is available.
func (e *Env) getAuthorize(ctx context.Context, q url.Values, withSession bool) (*Response, bool, error) {
	var hdr []string
	hasSession := false
	if withSession && e.target.hasSession() {
		cs, err := e.SessionCookies(ctx)
		if err != nil {
			return nil, false, err
		}
		hdr, hasSession = []string{"Cookie", cookieHeader(cs)}, true
	}
	hdr = append(hdr, "Accept", "text/html")
	r, err := e.Get(ctx, "/oauth/authorize?"+q.Encode(), hdr...)
	return r, hasSession, err
}

// location parses the Location of a redirect, or fails.
func location(r *Response) (*url.URL, error) {
	if r.Status < 300 || r.Status > 399 || r.Header.Get("Location") == "" {
		return nil, Fail("want a redirect, got %s", r.Snippet())
	}
	base, _ := url.Parse(r.URL)
	u, err := base.Parse(r.Header.Get("Location"))
	if err != nil {
		return nil, Fail("unparsable Location %q", r.Header.Get("Location"))
	}
	return u, nil
}

// sameEndpoint reports whether u is redirectURI with any query.
func sameEndpoint(u *url.URL, redirectURI string) bool {
	r, err := url.Parse(redirectURI)
	return err == nil && u.Scheme == r.Scheme && strings.EqualFold(u.Host, r.Host) && u.Path == r.Path
}

// isLoginRedirect reports whether u points at the service's /auth/login.
func (e *Env) isLoginRedirect(u *url.URL) bool {
	b, _ := url.Parse(e.BaseURL())
	return strings.EqualFold(u.Host, b.Host) && u.Path == strings.TrimRight(b.Path, "/")+"/auth/login"
}

// rejectRedirectURI is a check that an authorization request with redirect
// URI uri, which the suite's client did not register, gets a 400 HTML page and
// no redirect anywhere.
func rejectRedirectURI(id, title, uri string) Check {
	return probe(Check{ID: id, Title: title, Area: "authorize",
		Source: "decisions.md §Authorization endpoint; RFC 6749 §4.1.2.1; RFC 9700 §4.1"},
		authorizeNoSession(func(ctx context.Context, e *Env) (*authRequest, error) { return e.suiteRequest(ctx, uri) }),
		errorPage)
}

// authorizeNoSession sends the authorization request built by req without a session.
func authorizeNoSession(req func(ctx context.Context, e *Env) (*authRequest, error)) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		a, err := req(ctx, e)
		if err != nil {
			return nil, err
		}
		r, _, err := e.getAuthorize(ctx, a.Query, false)
		return r, err
	}
}

// errorPage is wantErrorPage as a judge.
func errorPage(_ *Env, r *Response) error { return wantErrorPage(r) }

func wantErrorPage(r *Response) error {
	if loc := r.Header.Get("Location"); loc != "" {
		return Fail("want a 400 error page and no redirect, got HTTP %d to %s", r.Status, loc)
	}
	if r.Status != 400 {
		return Fail("want HTTP 400 error page, got %s", r.Snippet())
	}
	if ct := r.ContentType(); ct != "text/html" {
		return Fail("want an HTML error page, got Content-Type %q", r.Header.Get("Content-Type"))
	}
	return nil
}

// errorRedirect is a check that a bad authorization request (edited from a
// good one) is sent back to the redirect URI with error=code and the state.
func errorRedirect(id, title, code string, edit func(q url.Values)) Check {
	return Check{
		ID: id, Title: title, Area: "authorize",
		Source: "decisions.md §Authorization endpoint; RFC 6749 §4.1.2.1",
		Run: func(ctx context.Context, e *Env) error {
			a, err := e.suiteRequest(ctx, loopbackRedirect)
			if err != nil {
				return err
			}
			edit(a.Query)
			r, session, err := e.getAuthorize(ctx, a.Query, true)
			if err != nil {
				return err
			}
			u, err := location(r)
			if err != nil {
				return Fail("want a redirect to %s with error=%s, got %s", loopbackRedirect, code, r.Snippet())
			}
			if e.isLoginRedirect(u) && !session {
				return Skip("the server asks for login before judging the request, and no session is available")
			}
			if !sameEndpoint(u, loopbackRedirect) {
				return Fail("want a redirect to %s with error=%s, got one to %s", loopbackRedirect, code, u)
			}
			q := u.Query()
			if q.Get("error") != code {
				return Fail("want error=%s in the redirect, got %s", code, u.RawQuery)
			}
			if q.Get("state") != a.State {
				return Fail("want state=%s echoed in the error redirect, got %q", a.State, q.Get("state"))
			}
			if q.Get("code") != "" {
				return Fail("an error redirect must not carry a code: %s", u)
			}
			return nil
		},
	}
}

// accepted is a check that an authorization request (edited from a good one)
// is not refused: the consent page, a redirect to login, or a code.
func accepted(id, title, source string, redirectURI string, edit func(q url.Values)) Check {
	return Check{
		ID: id, Title: title, Area: "authorize", Source: source,
		Run: func(ctx context.Context, e *Env) error {
			a, err := e.suiteRequest(ctx, redirectURI)
			if err != nil {
				return err
			}
			edit(a.Query)
			r, _, err := e.getAuthorize(ctx, a.Query, true)
			if err != nil {
				return err
			}
			if r.Status == 200 {
				return nil
			}
			u, err := location(r)
			if err != nil {
				return Fail("want the consent page or a redirect to login, got %s", r.Snippet())
			}
			if e.isLoginRedirect(u) || (sameEndpoint(u, redirectURI) && u.Query().Get("error") == "") {
				return nil
			}
			return Fail("want the consent page or a redirect to login, got a redirect to %s", u)
		},
	}
}

func noEdit(url.Values) {}

// suiteConsent fetches the consent page for a good request of the suite's
// client, as the logged-in test user.
func suiteConsent(ctx context.Context, e *Env) (*Response, error) {
	a, err := e.suiteRequest(ctx, loopbackRedirect)
	if err != nil {
		return nil, err
	}
	return e.consentPage(ctx, a)
}

// approveForm reads the form with an approve button from the consent page,
// and what approving submits.
func (e *Env) approveForm(ctx context.Context) (*htmlform.Form, url.Values, error) {
	r, err := suiteConsent(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	pu, _ := url.Parse(r.URL)
	p, err := htmlform.Parse(pu, r.Body)
	if err != nil {
		return nil, nil, Fail("consent page: %v", err)
	}
	f, b := p.FormWith("approve")
	if f == nil {
		return nil, nil, Fail("no form with an approve button on the consent page")
	}
	return f, f.Submission(b, nil), nil
}

// postConsent posts vals to the consent form f as the logged-in test user.
func (e *Env) postConsent(ctx context.Context, f *htmlform.Form, vals url.Values) (*Response, error) {
	cs, err := e.SessionCookies(ctx)
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, "POST", f.Action.String(),
		headers("Content-Type", "application/x-www-form-urlencoded", "Cookie", cookieHeader(cs)), []byte(vals.Encode()))
}

// postApproval posts the consent page's approve form as the logged-in test
// user, its values first edited by edit (nil: as the page has them), which
// may fail the check before anything is posted.
func (e *Env) postApproval(ctx context.Context, edit func(url.Values) error) (*Response, error) {
	f, vals, err := e.approveForm(ctx)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		if err := edit(vals); err != nil {
			return nil, err
		}
	}
	return e.postConsent(ctx, f, vals)
}

// consentPage fetches the consent page as the logged-in test user.
func (e *Env) consentPage(ctx context.Context, a *authRequest) (*Response, error) {
	r, _, err := e.getAuthorize(ctx, a.Query, true)
	if err != nil {
		return nil, err
	}
	if r.Status != 200 {
		return nil, Fail("want the consent page (HTTP 200) for a logged-in user, got %s %s", r.Snippet(), r.Header.Get("Location"))
	}
	return r, nil
}

func authorizeChecks() []Check {
	return []Check{
		probe(Check{ID: "AUTHZ-01", Title: "an unknown client_id gets a 400 HTML page and no redirect", Area: "authorize",
			Source: "decisions.md §Authorization endpoint; RFC 6749 §4.1.2.1"},
			authorizeNoSession(func(_ context.Context, e *Env) (*authRequest, error) {
				return e.newAuthRequest("unknown-"+randomString(8), loopbackRedirect)
			}),
			errorPage),
		rejectRedirectURI("AUTHZ-02", "an unregistered redirect URI is refused without redirecting", "https://attacker.example/callback"),
		rejectRedirectURI("AUTHZ-03", "a registered redirect URI with another path is refused", "https://client.example.com/other"),
		rejectRedirectURI("AUTHZ-04", "a host that only starts like the registered one is refused", "https://client.example.com.attacker.example/callback"),
		rejectRedirectURI("AUTHZ-05", "the registered redirect URI with an extra query is refused", "https://client.example.com/callback?next=x"),
		rejectRedirectURI("AUTHZ-06", "the registered https redirect URI as http is refused", "http://client.example.com/callback"),
		rejectRedirectURI("AUTHZ-07", "the registered redirect URI with a trailing slash is refused", "https://client.example.com/callback/"),
		rejectRedirectURI("AUTHZ-08", "a userinfo trick (registered host as user name) is refused", "https://client.example.com@attacker.example/callback"),
		rejectRedirectURI("AUTHZ-09", "the registered https redirect URI on another port is refused", "https://client.example.com:8443/callback"),
		rejectRedirectURI("AUTHZ-10", "a loopback redirect URI with another path is refused (only the port may vary)", "http://127.0.0.1:43117/other"),
		rejectRedirectURI("AUTHZ-11", "localhost does not match a registered 127.0.0.1 redirect URI", "http://localhost:43117/callback"),
		accepted("AUTHZ-12", "a loopback redirect URI on another port is accepted", "RFC 8252 §7.3 via decisions.md",
			"http://127.0.0.1:51234/callback", noEdit),
		errorRedirect("AUTHZ-13", "a request without code_challenge is redirected back with invalid_request", "invalid_request",
			func(q url.Values) { q.Del("code_challenge") }),
		errorRedirect("AUTHZ-14", "code_challenge_method=plain is redirected back with invalid_request", "invalid_request",
			func(q url.Values) { q.Set("code_challenge_method", "plain") }),
		errorRedirect("AUTHZ-15", "a request without code_challenge_method is redirected back with invalid_request", "invalid_request",
			func(q url.Values) { q.Del("code_challenge_method") }),
		errorRedirect("AUTHZ-16", "response_type=token is redirected back with unsupported_response_type", "unsupported_response_type",
			func(q url.Values) { q.Set("response_type", "token") }),
		errorRedirect("AUTHZ-17", "a scope other than mcp is redirected back with invalid_scope", "invalid_scope",
			func(q url.Values) { q.Set("scope", "admin") }),
		errorRedirect("AUTHZ-18", "a resource other than {base}/mcp is redirected back with invalid_target", "invalid_target",
			func(q url.Values) { q.Set("resource", "https://attacker.example/mcp") }),
		accepted("AUTHZ-19", "scope may be omitted (it means mcp)", "decisions.md §Authorization endpoint",
			loopbackRedirect, func(q url.Values) { q.Del("scope") }),
		{
			ID: "AUTHZ-20", Title: "without a session the request is sent to /auth/login", Area: "authorize",
			Source: "decisions.md §Authorization endpoint",
			Run: func(ctx context.Context, e *Env) error {
				_, u, err := e.loginRedirect(ctx)
				if err != nil {
					return err
				}
				if !e.isLoginRedirect(u) {
					return Fail("want a redirect to %s/auth/login, got one to %s", e.BaseURL(), u)
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-21", Title: "approving consent redirects with a code and the state", Area: "authorize",
			Source: "contract §GET /oauth/authorize; RFC 6749 §4.1.2", Needs: []Need{NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				a, u, err := e.consentRedirect(ctx, true)
				if err != nil {
					return err
				}
				if !sameEndpoint(u, loopbackRedirect) {
					return Fail("want a redirect to %s, got %s", loopbackRedirect, u)
				}
				if u.Query().Get("code") == "" || u.Query().Get("state") != a.State {
					return Fail("want code and state=%s in the redirect, got %s", a.State, u.RawQuery)
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-22", Title: "denying consent redirects with access_denied and the state", Area: "authorize",
			Source: "decisions.md §Authorization endpoint; RFC 6749 §4.1.2.1", Needs: []Need{NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				a, u, err := e.consentRedirect(ctx, false)
				if err != nil {
					return err
				}
				q := u.Query()
				if !sameEndpoint(u, loopbackRedirect) || q.Get("error") != "access_denied" || q.Get("state") != a.State {
					return Fail("want a redirect to %s with error=access_denied and state=%s, got %s", loopbackRedirect, a.State, u)
				}
				if q.Get("code") != "" {
					return Fail("a denial must not carry a code: %s", u)
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-23", Title: "the consent page names the client and the redirect host, HTML-escaped", Area: "authorize",
			Source: "decisions.md §Authorization endpoint", Needs: []Need{NeedSession},
			Run: func(ctx context.Context, e *Env) error {
				name := "Conformance <b>" + randomString(6) + "</b>"
				cid, err := e.registerClient(ctx, flows.ClientMetadata{ClientName: name, RedirectURIs: []string{httpsRedirect},
					GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"}, Scope: "mcp"})
				if err != nil {
					return setupFail("registering a client", err)
				}
				a, err := e.newAuthRequest(cid, httpsRedirect)
				if err != nil {
					return err
				}
				r, err := e.consentPage(ctx, a)
				if err != nil {
					return err
				}
				body := string(r.Body)
				if strings.Contains(body, name) {
					return Fail("the client name appears unescaped in the consent page (HTML injection)")
				}
				if !strings.Contains(body, strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(name)) {
					return Fail("the consent page does not show the client name %q", name)
				}
				if !strings.Contains(body, "client.example.com") {
					return Fail("the consent page does not show the redirect host client.example.com")
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-24", Title: "an approval posted without the CSRF token issues no code", Area: "authorize",
			Source: "decisions.md §Authorization endpoint", Needs: []Need{NeedSession},
			Run: func(ctx context.Context, e *Env) error {
				resp, err := e.postApproval(ctx, func(vals url.Values) error {
					dropped := false
					for k := range vals {
						if strings.Contains(strings.ToLower(k), "csrf") {
							vals.Del(k)
							dropped = true
						}
					}
					if !dropped {
						return Fail("the consent form has no CSRF field (an input whose name contains csrf)")
					}
					return nil
				})
				if err != nil {
					return err
				}
				if u, err := location(resp); err == nil && u.Query().Get("code") != "" {
					return Fail("a code was issued without the CSRF token: %s", u)
				}
				if resp.Status < 400 {
					return Fail("want the approval refused (4xx), got %s", resp.Snippet())
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-25", Title: "the login redirect carries the authorization request back (return_to)", Area: "authorize",
			Source: "decisions.md §Authorization endpoint (then back to the same request)", Severity: Should,
			Run: func(ctx context.Context, e *Env) error {
				a, u, err := e.loginRedirect(ctx)
				if err != nil {
					return err
				}
				// A server may also keep the request server-side behind an
				// opaque id, hence Should: look for the state in the redirect.
				if s, _ := url.QueryUnescape(u.RawQuery); !e.isLoginRedirect(u) || !strings.Contains(s, a.State) {
					return Fail("the login redirect does not carry the request (state %s not in %s)", a.State, u)
				}
				return nil
			},
		},
		errorRedirect("AUTHZ-26", "a request without response_type is redirected back with invalid_request", "invalid_request",
			func(q url.Values) { q.Del("response_type") }),
	}
}

// loginRedirect sends a good authorization request without a session and
// returns where it was redirected.
func (e *Env) loginRedirect(ctx context.Context) (*authRequest, *url.URL, error) {
	a, err := e.suiteRequest(ctx, loopbackRedirect)
	if err != nil {
		return nil, nil, err
	}
	r, _, err := e.getAuthorize(ctx, a.Query, false)
	if err != nil {
		return nil, nil, err
	}
	u, err := location(r)
	if err != nil {
		return nil, nil, Fail("want a redirect to /auth/login, got %s", r.Snippet())
	}
	return a, u, nil
}
