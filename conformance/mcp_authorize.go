package conformance

import (
	"context"
	"net/url"
	"strings"
)

// The mcp profile's authorization endpoint checks: PKCE, exact redirect
// URIs, state and iss.

const srcPKCE = srcMCPAuth + " §Authorization code protection"

// wantAuthorizationRefused judges an authorization request that must be
// refused: no code is ever issued for it, and when forbidden is set (an
// unregistered redirect URI) nothing is sent there, not even an error. It
// reads the server's first answer (with a session when the approver can
// give one); a sign-in page or redirect is seen through by the approver.
// When the approver cannot get past it, the check is inconclusive: an error
// page and a sign-in page the approver cannot drive look alike.
func (e *Env) wantAuthorizationRefused(ctx context.Context, authURL, forbidden string) error {
	au, _ := url.Parse(authURL)
	redirect := au.Query().Get("redirect_uri")
	judge := func(loc *url.URL) (bool, error) {
		switch {
		case forbidden != "" && sameEndpoint(loc, forbidden):
			return true, Fail("the server redirected to the unregistered redirect URI: %s", loc)
		case sameEndpoint(loc, redirect) && (loc.Query().Get("code") != "" || strings.Contains(loc.Fragment, "access_token")):
			return true, Fail("want the request refused, got a grant: %s", loc)
		case sameEndpoint(loc, redirect) && loc.Query().Get("error") != "":
			return true, nil
		}
		return false, nil
	}
	hdr := []string{"Accept", "text/html"}
	if e.target.hasSession() {
		if cs, err := e.SessionCookies(ctx); err == nil {
			hdr = append(hdr, "Cookie", cookieHeader(cs))
		}
	}
	r, err := e.Get(ctx, authURL, hdr...)
	if err != nil {
		return err
	}
	if r.Status >= 400 {
		return nil // an error page
	}
	if loc, err := location(r); err == nil {
		if judged, err := judge(loc); judged {
			return err
		}
	}
	if e.target.Approver == nil {
		return Skip("the server shows a page or asks for sign-in before judging the request: needs an approver (--approve=form, --approve=manual or --browser-command)")
	}
	e.approving.Add(1)
	loc, err := e.target.Approver.ApproveConsent(ctx, authURL)
	e.approving.Add(-1)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &InconclusiveError{Reason: "could not see past the sign-in page to tell whether the request is refused: " + err.Error(),
			Flag: "--browser-command or --approve=manual"}
	}
	if judged, err := judge(loc); judged {
		return err
	}
	return nil // sent elsewhere: not a grant
}

// mcpRefusal is a check that an authorization request edited by edit is
// refused; forbidden as for wantAuthorizationRefused.
func mcpRefusal(id, area, title, source string, sev Severity, edit func(e *Env, q url.Values) (forbidden string)) Check {
	c := mcpCheck(id, area, title, source, sev, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
		g, err := e.mcpRequest(ctx, s, "", s.scope())
		if err != nil {
			return err
		}
		forbidden := ""
		authURL := editQuery(g.req.URL(), func(q url.Values) { forbidden = edit(e, q) })
		return e.wantAuthorizationRefused(ctx, authURL, forbidden)
	})
	c.SignsIn = true // the approver sees past a sign-in page
	return c
}

// badRedirect sets the request's redirect_uri to the registered one
// changed by change, and returns it.
func badRedirect(change func(string) string) func(e *Env, q url.Values) string {
	return func(e *Env, q url.Values) string {
		bad := change(e.redirectURI())
		q.Set("redirect_uri", bad)
		return bad
	}
}

func mcpAuthorizeChecks() []Check {
	approval := []Need{NeedApproval}
	const srcRedirect = srcMCPAuth + " §Open redirection (exact redirect URI matching); OAuth 2.1 §4.1.1 and §7.12"
	return []Check{
		mcpRefusal("MCP-06", areaPKCE, "an authorization request without code_challenge is refused",
			srcPKCE+"; OAuth 2.1 §4.1.1", Must, func(_ *Env, q url.Values) string {
				q.Del("code_challenge")
				q.Del("code_challenge_method")
				return ""
			}),
		mcpCheck("MCP-08", areaPKCE, "a code_verifier that does not match the challenge is refused",
			srcPKCE+"; RFC 7636 §4.6", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRedeemEdited(ctx, s, func(f url.Values) { f.Set("code_verifier", randomString(32)) })
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpRefusal("MCP-44", areaPKCE, "an authorization request with code_challenge_method=plain is refused",
			srcPKCE+" (S256); OAuth 2.1 §4.1.1; RFC 9700 §2.1.1", Should, func(_ *Env, q url.Values) string {
				q.Set("code_challenge", randomString(40))
				q.Set("code_challenge_method", "plain")
				return ""
			}),
		mcpCheck("MCP-45", areaPKCE, "a token request without code_verifier, for a code issued with a challenge, is refused",
			srcPKCE+"; RFC 7636 §4.5 and §4.6; OAuth 2.1 §4.1.3", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRedeemEdited(ctx, s, func(f url.Values) { f.Del("code_verifier") })
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant", "invalid_request")
			}),
		mcpRefusal("MCP-46", areaPKCE, "a code_challenge that is not 43 base64url characters (S256) is refused",
			"RFC 7636 §4.2 and §4.4.1", Should, func(_ *Env, q url.Values) string {
				q.Set("code_challenge", "too-short")
				return ""
			}),
		mcpCheck("MCP-09", areaAuthorize, "the authorization response carries iss equal to the issuer (RFC 9207), when advertised",
			srcMCPAuth+" (SEP-2468); RFC 9207 §2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				if !s.flag("authorization_response_iss_parameter_supported") {
					return Skip("the server does not advertise authorization_response_iss_parameter_supported")
				}
				_, u, err := e.mcpGrant(ctx, s.scope())
				if err != nil {
					return err
				}
				if got := u.Query()["iss"]; len(got) != 1 || got[0] != s.issuer {
					return Fail("iss: want exactly %q, got %q", s.issuer, got)
				}
				return nil
			}),
		mcpRefusal("MCP-47", areaAuthorize, "an unregistered redirect_uri is never redirected to, not even with an error",
			srcRedirect+"; RFC 6749 §4.1.2.1", Must, badRedirect(func(string) string { return "https://attacker.example/callback" })),
		mcpRefusal("MCP-48", areaAuthorize, "a redirect_uri that extends the registered path is not redirected to (exact match)",
			srcRedirect, Must, badRedirect(func(r string) string { return r + "/extra" })),
		mcpRefusal("MCP-50", areaAuthorize, "an unknown client_id gets an error page, no redirect",
			"RFC 6749 §4.1.2.1 (MUST NOT redirect for an invalid client_id); "+srcRedirect, Must, func(e *Env, q url.Values) string {
				q.Set("client_id", "unknown-"+randomString(8))
				return q.Get("redirect_uri")
			}),
		mcpRefusal("MCP-51", areaAuthorize, "response_type=token (the implicit grant) is refused",
			"OAuth 2.1 §10.1 (implicit removed); RFC 9700 §2.1.2", Should, func(_ *Env, q url.Values) string {
				q.Set("response_type", "token")
				return ""
			}),
		mcpCheck("MCP-52", areaAuthorize, "state comes back unchanged, reserved characters included",
			"RFC 6749 §4.1.2; "+srcMCPAuth+" §Authorization flow steps (state)", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				state := "a+b/c=d&e " + randomString(8)
				_, u, err := e.mcpAuthorize(ctx, s, "", s.scope(), func(q url.Values) { q.Set("state", state) })
				if err != nil {
					return err
				}
				if got := u.Query()["state"]; len(got) != 1 || got[0] != state {
					return Fail("state: want exactly %q, got %q (%s)", state, got, u)
				}
				return nil
			}),
		mcpCheck("MCP-53", areaAuthorize, "denying consent redirects with error=access_denied and the state",
			"RFC 6749 §4.1.2.1", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				g, err := e.mcpRequest(ctx, s, "", s.scope())
				if err != nil {
					return err
				}
				e.approving.Add(1)
				u, err := e.target.Approver.DenyConsent(ctx, g.req.URL())
				e.approving.Add(-1)
				if err != nil {
					return approverFail(err)
				}
				if u.Query().Get("code") != "" && u.Query().Get("error") == "" {
					// No consent page was shown, so there was nothing to deny.
					return &InconclusiveError{Reason: "the server granted without a consent page the approver could deny: " + u.String(),
						Flag: "--browser-command with a driver that can deny"}
				}
				if u.Query().Get("error") != "access_denied" || u.Query().Get("state") != g.req.State || u.Query().Get("code") != "" {
					return Fail("want error=access_denied with state %s and no code, got %s", g.req.State, u)
				}
				return nil
			}),
	}
}
