package conformance

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The mcp profile's refresh and revocation checks, where the server offers
// them.

const srcRefreshMCP = srcMCPAuth + " §Refresh tokens; OAuth 2.1 §4.3"

// offline is a refresh token issued to the profile's client, with the
// scope granted with it.
type offline struct {
	client  string
	tokens  pair
	granted []string
}

// mcpOffline runs the code flow asking for a refresh token, where the
// server offers them (the refresh_token grant; offline_access too when it
// lists that scope).
func (e *Env) mcpOffline(ctx context.Context, s *mcpSite) (*offline, error) {
	if !s.offers("grant_types_supported", "refresh_token") {
		return nil, Skip("the server offers no refresh tokens (no refresh_token in grant_types_supported)")
	}
	scope := s.scope()
	if s.offers("scopes_supported", "offline_access") && !slices.Contains(strings.Fields(scope), "offline_access") {
		scope = strings.TrimSpace(scope + " offline_access")
	}
	r, err := e.mcpTokens(ctx, scope)
	if err != nil {
		return nil, e.blockedBy(stepSignIn, err)
	}
	o, err := decodeObject(r)
	if err == nil && !o.has("refresh_token") && r.Status == 200 {
		return nil, Skip("the server issued no refresh token for scope " + scope)
	}
	p, err := readPair(r)
	if err != nil {
		return nil, e.blockedBy(stepSignIn, setupFail("obtaining a refresh token", err))
	}
	granted := scope
	if o.has("scope") {
		granted, _ = o.str("scope")
	}
	cid, _ := e.mcpClient(ctx)
	return &offline{client: cid, tokens: p, granted: strings.Fields(granted)}, nil
}

// mcpRefresh presents refresh token rt as client cid, with scope when set.
func (e *Env) mcpRefresh(ctx context.Context, s *mcpSite, cid, rt, scope string) (*Response, error) {
	f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}}
	if scope != "" {
		f.Set("scope", scope)
	}
	return e.tokenRequest(ctx, s, f)
}

// mcpRefreshed obtains a refresh token and refreshes it once, returning
// what was issued first and the refresh's answer.
func (e *Env) mcpRefreshed(ctx context.Context, s *mcpSite) (*offline, *Response, error) {
	o, err := e.mcpOffline(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	r, err := e.mcpRefresh(ctx, s, o.client, o.tokens.Refresh, "")
	return o, r, err
}

// mcpRotated is mcpRefreshed wanting the refresh to issue a new pair.
func (e *Env) mcpRotated(ctx context.Context, s *mcpSite) (*offline, pair, *Response, error) {
	o, r, err := e.mcpRefreshed(ctx, s)
	if err != nil {
		return nil, pair{}, nil, err
	}
	q, err := readPair(r)
	if err != nil {
		return nil, pair{}, nil, Fail("refreshing: %v", err)
	}
	return o, q, r, nil
}

// notGranted is a scope the grant does not hold: one the server lists, or
// a made-up one.
func (s *mcpSite) notGranted(granted []string) string {
	prm, _ := s.prm.strs("scopes_supported")
	as, _ := s.as.strs("scopes_supported")
	for _, sc := range slices.Concat(prm, as) {
		if !slices.Contains(granted, sc) {
			return sc
		}
	}
	return "mcpauth-conformance-not-granted"
}

// wantNoWiderScope checks the scope of a successful refresh response: no
// scope beyond granted. Without a scope member the response means the scope
// requested (RFC 6749 §5.1), so asked is what was granted then.
func wantNoWiderScope(r *Response, granted []string, asked string) error {
	o, err := decodeObject(r)
	if err != nil {
		return err
	}
	got := asked
	if o.has("scope") {
		if got, err = o.str("scope"); err != nil {
			return err
		}
	}
	for _, sc := range strings.Fields(got) {
		if !slices.Contains(granted, sc) {
			return Fail("the refresh granted %q, beyond the original grant %q", got, strings.Join(granted, " "))
		}
	}
	return nil
}

// refreshReuseWindow is how long MCP-12 waits out a server's reuse
// window (a spent refresh token answered again for a while, for a client
// that lost the answer; or rotation only after a while) before judging
// rotation: a minute, the longest common setting, and a second.
const refreshReuseWindow = 61 * time.Second

// wantRotated judges rotation: refreshing p gives a new refresh token, and
// p is refused afterwards. What looks like a fault at once is tried again
// after refreshReuseWindow, and a failure says what was seen both times.
func (e *Env) wantRotated(ctx context.Context, p pair, refresh func(rt string) (*Response, error)) error {
	next := func(when string) (pair, error) {
		r, err := refresh(p.Refresh)
		if err != nil {
			return pair{}, err
		}
		q, err := readPair(r)
		if err != nil {
			return pair{}, Fail("refreshing%s: %v", when, err)
		}
		return q, nil
	}
	q, err := next("")
	if err != nil {
		return err
	}
	later := fmt.Sprintf(" %s later", refreshReuseWindow)
	if q.Refresh == p.Refresh {
		if err := e.afterReuseWindow(ctx, "refreshing returned the same refresh token"); err != nil {
			return err
		}
		if q, err = next(later); err != nil {
			return err
		}
		if q.Refresh == p.Refresh {
			return Fail("the refresh token was not rotated: refreshing returned the same refresh token, at once and again%s", later)
		}
	}
	r, err := refresh(p.Refresh)
	if err != nil {
		return err
	}
	if r.Status == 200 {
		if err := e.afterReuseWindow(ctx, "the spent refresh token was answered again (HTTP 200) right after its use"); err != nil {
			return err
		}
		if r, err = refresh(p.Refresh); err != nil {
			return err
		}
		if r.Status == 200 {
			return Fail("the spent refresh token is still answered (HTTP 200) right after its use and again%s: it was not rotated out", later)
		}
	}
	return wantOAuthError(r, 400, "invalid_grant")
}

// afterReuseWindow waits out refreshReuseWindow (on the test clock, or for
// real with --real-time), or says why it cannot: seen is what made the
// check wait.
func (e *Env) afterReuseWindow(ctx context.Context, seen string) error {
	cannot := func(flag string) error {
		return &InconclusiveError{Reason: fmt.Sprintf("%s; a server may do so within a reuse window, and trying again %s later needs %s",
			seen, refreshReuseWindow, flag), Flag: flag}
	}
	if e.target.Clock == nil {
		if !e.opts.RealTime {
			return cannot("--clock-url or --real-time")
		}
		if deadline, ok := ctx.Deadline(); ok && deadline.Sub(e.opts.Now()) < refreshReuseWindow+10*time.Second {
			return cannot("a --timeout longer than " + (refreshReuseWindow + 10*time.Second).String())
		}
	}
	e.Progress("%s; trying again after a reuse window of %s", seen, refreshReuseWindow)
	return e.Advance(ctx, refreshReuseWindow)
}

// mcpRevocationCheck is an mcp check of the revocation endpoint ep the
// server advertises; it is skipped where there is none.
func mcpRevocationCheck(id, title, source string, sev Severity, needs []Need, run func(ctx context.Context, e *Env, s *mcpSite, ep string) error) Check {
	return mcpCheck(id, areaRevocation, title, source, sev, needs, func(ctx context.Context, e *Env, s *mcpSite) error {
		ep, err := s.as.str("revocation_endpoint")
		if err != nil {
			return Skip("the server advertises no revocation_endpoint")
		}
		return run(ctx, e, s, ep)
	})
}

func mcpRefreshChecks() []Check {
	approval := []Need{NeedApproval}
	const srcRevoke = "RFC 7009 §2.1 and §2.2; " + srcMCPAuth + " §Token revocation"
	return []Check{
		mcpCheck("MCP-12", areaRefresh, "refresh tokens, when offered, rotate: the old one is refused after use",
			srcMCPAuth+"; OAuth 2.1 §4.3.1; RFC 9700 §4.14.2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				if !s.offers("grant_types_supported", "refresh_token") || !s.offers("scopes_supported", "offline_access") {
					return Skip("the server offers no refresh tokens (refresh_token grant and offline_access scope)")
				}
				r, err := e.mcpTokens(ctx, strings.TrimSpace(s.scope()+" offline_access"))
				if err != nil {
					return err
				}
				p, err := readPair(r)
				if err != nil {
					return err
				}
				cid, _ := e.mcpClient(ctx)
				refresh := func(rt string) (*Response, error) {
					return e.PostForm(ctx, s.meta.TokenEndpoint, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}})
				}
				return e.wantRotated(ctx, p, refresh)
			}),
		mcpCheck("MCP-66", areaRefresh, "the access token a refresh returns is accepted by the MCP endpoint",
			srcRefreshMCP+"; "+srcTokenUse, Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, r, err := e.mcpRefreshed(ctx, s)
				if err != nil {
					return err
				}
				tok, err := accessToken(r)
				if err != nil {
					return Fail("refreshing: %v", err)
				}
				if ok, m, err := e.mcpAccepts(ctx, s, tok); err != nil {
					return err
				} else if !ok {
					return Fail("the refreshed access token is refused: %s", m.Snippet())
				}
				return nil
			}),
		mcpCheck("MCP-67", areaRefresh, "a refresh never widens the scope: not on its own, and a wider scope asked for gets invalid_scope",
			"RFC 6749 §6 (MUST NOT include any scope not originally granted) and §5.2 (invalid_scope)", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, _, r, err := e.mcpRotated(ctx, s)
				if err != nil {
					return err
				}
				if err := wantNoWiderScope(r, o.granted, strings.Join(o.granted, " ")); err != nil {
					return err
				}
				// A grant of its own, so a fault of rotation (MCP-12) is not
				// taken for one of scope.
				if o, err = e.mcpOffline(ctx, s); err != nil {
					return err
				}
				wider := strings.Join(append(slices.Clone(o.granted), s.notGranted(o.granted)), " ")
				if r, err = e.mcpRefresh(ctx, s, o.client, o.tokens.Refresh, wider); err != nil {
					return err
				}
				if r.Status == 200 {
					return wantNoWiderScope(r, o.granted, wider)
				}
				return wantOAuthError(r, 400, "invalid_scope")
			}),
		mcpCheck("MCP-68", areaRefresh, "reusing a rotated refresh token revokes the newer one too (the family)",
			"RFC 9700 §4.14.2; OAuth 2.1 §4.3.1", Should, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, q, r, err := e.mcpRotated(ctx, s)
				if err != nil {
					return err
				}
				if q.Refresh == o.tokens.Refresh {
					return Skip("the server does not rotate refresh tokens (see MCP-12)")
				}
				if _, err := e.mcpRefresh(ctx, s, o.client, o.tokens.Refresh, ""); err != nil {
					return err
				}
				if r, err = e.mcpRefresh(ctx, s, o.client, q.Refresh, ""); err != nil {
					return err
				}
				if r.Status == 200 {
					return Fail("after the old refresh token was reused, the newer one still works: %s", r.Snippet())
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpCheck("MCP-69", areaRefresh, "a refresh token presented by another client is refused",
			"RFC 6749 §6 (the refresh token is bound to the client); OAuth 2.1 §4.3.1", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, err := e.mcpOffline(ctx, s)
				if err != nil {
					return err
				}
				other, err := e.mcpOtherClient(ctx)
				if err != nil {
					return err
				}
				r, err := e.mcpRefresh(ctx, s, other, o.tokens.Refresh, "")
				if err != nil {
					return err
				}
				return wantOAuthError(r, 0, "invalid_grant", "invalid_client")
			}),
		mcpRevocationCheck("MCP-70", "a revoked refresh token is refused afterwards, where revocation is advertised",
			srcRevoke, Must, approval, func(ctx context.Context, e *Env, s *mcpSite, ep string) error {
				o, err := e.mcpOffline(ctx, s)
				if err != nil {
					return err
				}
				if err := e.revokedAt(ctx, ep, o.client, o.tokens.Refresh, "refresh_token"); err != nil {
					return err
				}
				r, err := e.mcpRefresh(ctx, s, o.client, o.tokens.Refresh, "")
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpRevocationCheck("MCP-71", "revoking a token the server does not know gets 200",
			"RFC 7009 §2.2 (invalid tokens do not cause an error)", Must, nil, func(ctx context.Context, e *Env, s *mcpSite, ep string) error {
				cid, err := e.mcpClient(ctx)
				if err != nil {
					return err
				}
				r, err := e.revokeAt(ctx, ep, cid, "unknown-"+randomString(24), "")
				if err != nil {
					return err
				}
				return wantStatus(r, 200)
			}),
		mcpRevocationCheck("MCP-72", "a revoked access token is refused by the MCP endpoint",
			srcRevoke+"; "+srcTokenHand, Should, approval, func(ctx context.Context, e *Env, s *mcpSite, ep string) error {
				tok, err := e.mcpAccessToken(ctx, s)
				if err != nil {
					return err
				}
				cid, _ := e.mcpClient(ctx)
				if err := e.revokedAt(ctx, ep, cid, tok, "access_token"); err != nil {
					return err
				}
				return e.mcpWantRefused(ctx, s, tok, "the revoked access token still works")
			}),
	}
}
