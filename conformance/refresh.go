package conformance

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpauth/mcpauth/flows"
)

// The checks of decisions.md "MCP 2026-07-28: server side" about refresh
// tokens and RFC 7009 revocation. Refresh requests are sent raw: they are
// what every OAuth client sends (a form with grant_type=refresh_token), and
// the checks must see each answer as it came.

const (
	src2026       = "decisions.md §MCP 2026-07-28: server side"
	srcRefresh    = "RFC 6749 §6; RFC 9700 §4.14.2 via " + src2026 + " (Refresh tokens)"
	srcRevocation = "RFC 7009 §2 via " + src2026 + " (Revocation)"
	offlineScope  = "mcp offline_access"
)

// offlineClient returns a client registered once per run with the
// refresh_token grant (which = 0 or 1), so that asking offline_access gets a
// refresh token.
func (e *Env) offlineClient(ctx context.Context, which int) (string, error) {
	id, err := e.run.offline[which].get(ctx, func(ctx context.Context) (string, error) {
		return e.registerClient(ctx, flows.ClientMetadata{
			ClientName:    fmt.Sprintf("mcpauth conformance offline %d", which),
			RedirectURIs:  []string{loopbackRedirect},
			GrantTypes:    []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"},
			Scope:         "mcp",
		})
	})
	if err != nil {
		return "", setupFail("registering a client with the refresh_token grant", err)
	}
	return id, nil
}

// codeFor obtains an authorization code for clientID with scope.
func (e *Env) codeFor(ctx context.Context, clientID, scope string) (*grant, error) {
	if e.target.Approver == nil {
		return nil, Skip("needs an approver")
	}
	cfg := e.authConfig(clientID)
	cfg.Scope = scope
	req, err := cfg.NewRequest(loopbackRedirect)
	if err != nil {
		return nil, setupFail("building an authorization request", err)
	}
	code, err := cfg.Authorize(ctx, req, e.approver().ApproveConsent)
	if err != nil {
		return nil, setupFail("approving consent", err)
	}
	return &grant{cfg: cfg, req: req, Code: code}, nil
}

// exchangeFor obtains a code for clientID with scope and redeems it through
// flows, returning the grant (to replay it) and the server's answer.
func (e *Env) exchangeFor(ctx context.Context, clientID, scope string) (*grant, *Response, error) {
	g, err := e.codeFor(ctx, clientID, scope)
	if err != nil {
		return nil, nil, err
	}
	r, err := e.exchange(ctx, g)
	return g, r, err
}

// pair is an access token and the refresh token issued with it.
type pair struct{ Access, Refresh string }

// readPair reads a token response that must carry both tokens.
func readPair(r *Response) (pair, error) {
	at, err := accessToken(r)
	if err != nil {
		return pair{}, err
	}
	o, _ := decodeObject(r)
	if !o.has("refresh_token") {
		return pair{}, Fail("want a refresh_token in the token response, got none (%s)", r.Snippet())
	}
	rt, err := o.filled("refresh_token")
	if err != nil {
		return pair{}, err
	}
	return pair{Access: at, Refresh: rt}, nil
}

// offlineExchange runs the code flow for offlineClient(which) asking scope,
// and returns the client, the grant and the answer to the exchange.
func (e *Env) offlineExchange(ctx context.Context, which int, scope string) (string, *grant, *Response, error) {
	cid, err := e.offlineClient(ctx, which)
	if err != nil {
		return "", nil, nil, err
	}
	g, r, err := e.exchangeFor(ctx, cid, scope)
	return cid, g, r, err
}

// offlineTokens runs the code flow for offlineClient(which) asking
// offline_access, and returns the client and the pair issued.
func (e *Env) offlineTokens(ctx context.Context, which int) (string, pair, error) {
	cid, _, r, err := e.offlineExchange(ctx, which, offlineScope)
	if err != nil {
		return "", pair{}, err
	}
	p, err := readPair(r)
	if err != nil {
		return "", pair{}, setupFail("obtaining a refresh token with offline_access", err)
	}
	return cid, p, nil
}

// withOfflineTokens is a check's Run on a fresh offlineTokens(0): the
// client and the pair issued to it.
func withOfflineTokens(run func(ctx context.Context, e *Env, cid string, p pair) error) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		cid, p, err := e.offlineTokens(ctx, 0)
		if err != nil {
			return err
		}
		return run(ctx, e, cid, p)
	}
}

// offlineTokensAndOther is offlineTokens(0) and the id of the second
// offline client, for the checks that another client cannot use the pair.
func (e *Env) offlineTokensAndOther(ctx context.Context) (cid string, p pair, other string, err error) {
	if cid, p, err = e.offlineTokens(ctx, 0); err != nil {
		return "", pair{}, "", err
	}
	if other, err = e.offlineClient(ctx, 1); err != nil {
		return "", pair{}, "", err
	}
	return cid, p, other, nil
}

// refresh presents refresh token rt as clientID at the token endpoint.
func (e *Env) refresh(ctx context.Context, clientID, rt string) (*Response, error) {
	return e.PostForm(ctx, "/oauth/token", url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID},
	})
}

// revoke posts token to the contract's revocation endpoint as clientID (""
// for none).
func (e *Env) revoke(ctx context.Context, clientID, token string) (*Response, error) {
	return e.revokeAt(ctx, "/oauth/revoke", clientID, token, "")
}

// revokeAt posts token to revocation endpoint ep as clientID ("" for none),
// with token_type_hint hint when set.
func (e *Env) revokeAt(ctx context.Context, ep, clientID, token, hint string) (*Response, error) {
	f := url.Values{"token": {token}}
	if clientID != "" {
		f.Set("client_id", clientID)
	}
	if hint != "" {
		f.Set("token_type_hint", hint)
	}
	return e.PostForm(ctx, ep, f)
}

// refreshed presents refresh token rt as clientID and wants a new pair; what
// names the refresh in the failure.
func (e *Env) refreshed(ctx context.Context, clientID, rt, what string) (pair, error) {
	r, err := e.refresh(ctx, clientID, rt)
	if err != nil {
		return pair{}, err
	}
	q, err := readPair(r)
	if err != nil {
		return pair{}, Fail("%s: %v", what, err)
	}
	return q, nil
}

// refreshRefused presents refresh token rt as clientID and wants 400
// invalid_grant; what names the token in the failure.
func (e *Env) refreshRefused(ctx context.Context, clientID, rt, what string) error {
	r, err := e.refresh(ctx, clientID, rt)
	if err != nil {
		return err
	}
	if err := wantOAuthError(r, 400, "invalid_grant"); err != nil {
		return Fail("%s: %v", what, err)
	}
	return nil
}

// revoked revokes token as clientID at the contract's endpoint and wants
// HTTP 200.
func (e *Env) revoked(ctx context.Context, clientID, token string) error {
	return e.revokedAt(ctx, "/oauth/revoke", clientID, token, "")
}

// revokedAt is revokeAt wanting HTTP 200.
func (e *Env) revokedAt(ctx context.Context, ep, clientID, token, hint string) error {
	r, err := e.revokeAt(ctx, ep, clientID, token, hint)
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return Fail("revoking: want HTTP 200, got %s", r.Snippet())
	}
	return nil
}

// wantRefused checks that access token tok no longer opens /api/ping.
func (e *Env) wantRefused(ctx context.Context, tok, what string) error {
	r, err := e.GetBearer(ctx, "/api/ping", tok)
	if err != nil {
		return err
	}
	if r.Status != 401 {
		return Fail("%s: want the access token refused (401), got %s", what, r.Snippet())
	}
	return nil
}

// wantWorks checks that access token tok opens /api/ping.
func (e *Env) wantWorks(ctx context.Context, tok, what string) error {
	r, err := e.GetBearer(ctx, "/api/ping", tok)
	if err != nil {
		return err
	}
	if _, err := pingOK(r); err != nil {
		return Fail("%s: want the access token accepted: %v", what, err)
	}
	return nil
}

// rotated refreshes p once and returns the new pair, failing the setup when
// the refresh does not work.
func (e *Env) rotated(ctx context.Context, cid string, p pair) (pair, error) {
	r, err := e.refresh(ctx, cid, p.Refresh)
	if err != nil {
		return pair{}, err
	}
	q, err := readPair(r)
	if err != nil {
		return pair{}, setupFail("refreshing", err)
	}
	return q, nil
}

func refreshChecks() []Check {
	approval := []Need{NeedApproval}
	return []Check{
		{
			ID: "REFRESH-01", Title: "asking offline_access (client with the refresh_token grant) issues a refresh token that works",
			Area: "refresh", Source: srcRefresh, Needs: approval,
			Run: func(ctx context.Context, e *Env) error {
				cid, _, r, err := e.offlineExchange(ctx, 0, offlineScope)
				if err != nil {
					return err
				}
				p, err := readPair(r)
				if err != nil {
					return err
				}
				q, err := e.refreshed(ctx, cid, p.Refresh, "refreshing")
				if err != nil {
					return err
				}
				return e.wantWorks(ctx, q.Access, "the refreshed access token")
			},
		},
		{
			ID: "REFRESH-02", Title: "without offline_access no refresh token is issued",
			Area: "refresh", Source: srcRefresh, Needs: approval,
			Run: func(ctx context.Context, e *Env) error {
				_, _, r, err := e.offlineExchange(ctx, 0, "mcp")
				if err != nil {
					return err
				}
				if _, err := accessToken(r); err != nil {
					return setupFail("exchanging the code", err)
				}
				if o, _ := decodeObject(r); o.has("refresh_token") {
					return Fail("a refresh_token was issued although offline_access was not asked for")
				}
				return nil
			},
		},
		{
			ID: "REFRESH-03", Title: "a refresh rotates: a new access and refresh token, and the old refresh token is spent",
			Area: "refresh", Source: srcRefresh, Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				q, err := e.refreshed(ctx, cid, p.Refresh, "refreshing")
				if err != nil {
					return err
				}
				if q.Refresh == p.Refresh {
					return Fail("the refresh token was not rotated: the same one came back")
				}
				if q.Access == p.Access {
					return Fail("the refresh returned the same access token")
				}
				if err := e.wantWorks(ctx, q.Access, "the new access token"); err != nil {
					return err
				}
				return e.refreshRefused(ctx, cid, p.Refresh, "presenting the spent refresh token again")
			}),
		},
		{
			ID: "REFRESH-04", Title: "reusing a spent refresh token revokes the family: the newer refresh token and its access token",
			Area: "refresh", Source: srcRefresh, Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				q, err := e.rotated(ctx, cid, p)
				if err != nil {
					return err
				}
				if _, err := e.refresh(ctx, cid, p.Refresh); err != nil { // the replay
					return err
				}
				if err := e.refreshRefused(ctx, cid, q.Refresh, "after a replay of the spent refresh token, the newer refresh token"); err != nil {
					return err
				}
				return e.wantRefused(ctx, q.Access, "after a replay of the spent refresh token, the access token issued from the family")
			}),
		},
		{
			ID: "REFRESH-05", Title: "of concurrent refreshes with one refresh token exactly one gets new tokens",
			Area: "refresh", Source: srcRefresh, Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				const n = 6
				var wg sync.WaitGroup
				rs := make([]*Response, n)
				errs := make([]error, n)
				start := make(chan struct{})
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						rs[i], errs[i] = e.refresh(ctx, cid, p.Refresh)
					}()
				}
				close(start)
				wg.Wait()
				won := 0
				for i, r := range rs {
					if errs[i] != nil {
						return errs[i]
					}
					switch {
					case r.Status == 200:
						won++
					default:
						if err := wantOAuthError(r, 400, "invalid_grant"); err != nil {
							return Fail("a losing concurrent refresh: %v", err)
						}
					}
				}
				if won != 1 {
					return Fail("%d of %d concurrent refreshes with one refresh token got new tokens, want exactly 1", won, n)
				}
				return nil
			}),
		},
		{
			ID: "REFRESH-06", Title: "a refresh token presented by another client gets invalid_grant and revokes nothing",
			Area: "refresh", Source: srcRefresh + "; RFC 6749 §6", Needs: approval,
			Run: func(ctx context.Context, e *Env) error {
				cid, p, other, err := e.offlineTokensAndOther(ctx)
				if err != nil {
					return err
				}
				if err := e.refreshRefused(ctx, other, p.Refresh, "refresh by another client"); err != nil {
					return err
				}
				_, err = e.refreshed(ctx, cid, p.Refresh, "the owner's refresh after another client presented its token")
				return err
			},
		},
		{
			ID: "REFRESH-08", Title: "a refresh never widens the scope: a scope beyond the original grant gets invalid_scope",
			Area: "refresh", Source: "RFC 6749 §6 (MUST NOT include any scope not originally granted) and §5.2", Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				granted := strings.Fields(offlineScope)
				wider := offlineScope + " mcpauth-conformance-not-granted"
				r, err := e.PostForm(ctx, "/oauth/token", url.Values{
					"grant_type": {"refresh_token"}, "refresh_token": {p.Refresh}, "client_id": {cid}, "scope": {wider},
				})
				if err != nil {
					return err
				}
				if r.Status == 200 {
					return wantNoWiderScope(r, granted, wider)
				}
				return wantOAuthError(r, 400, "invalid_scope")
			}),
		},
		{
			ID: "REFRESH-07", Title: "replaying the authorization code also revokes the refresh token issued from it",
			Area: "refresh", Source: "RFC 6749 §4.1.2 via " + src2026 + " (Refresh tokens)", Needs: approval,
			Run: func(ctx context.Context, e *Env) error {
				cid, g, r, err := e.offlineExchange(ctx, 0, offlineScope)
				if err != nil {
					return err
				}
				p, err := readPair(r)
				if err != nil {
					return setupFail("first exchange", err)
				}
				if _, err := e.exchange(ctx, g); err != nil {
					return err
				}
				return e.refreshRefused(ctx, cid, p.Refresh, "after the code was replayed, its refresh token")
			},
		},
	}
}

func revokeChecks() []Check {
	approval := []Need{NeedApproval}
	return []Check{
		{
			ID: "REVOKE-01", Title: "revoking a refresh token revokes its family: the refresh token and the access token",
			Area: "revoke", Source: srcRevocation + "; RFC 7009 §2.1", Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				if err := e.revoked(ctx, cid, p.Refresh); err != nil {
					return err
				}
				if err := e.refreshRefused(ctx, cid, p.Refresh, "the revoked refresh token"); err != nil {
					return err
				}
				return e.wantRefused(ctx, p.Access, "the access token issued with the revoked refresh token")
			}),
		},
		{
			ID: "REVOKE-02", Title: "revoking an access token gets 200 and the token is refused afterwards",
			Area: "revoke", Source: srcRevocation, Needs: approval,
			Run: withOfflineTokens(func(ctx context.Context, e *Env, cid string, p pair) error {
				if err := e.revoked(ctx, cid, p.Access); err != nil {
					return err
				}
				return e.wantRefused(ctx, p.Access, "the revoked access token")
			}),
		},
		{
			ID: "REVOKE-03", Title: "revoking an unknown token gets 200", Area: "revoke",
			Source: "RFC 7009 §2.2 via " + src2026 + " (Revocation)",
			Run: func(ctx context.Context, e *Env) error {
				cid, err := e.client(ctx, 0)
				if err != nil {
					return err
				}
				for _, tok := range []string{"mcpr_" + randomString(32), "unknown-" + randomString(16)} {
					r, err := e.revoke(ctx, cid, tok)
					if err != nil {
						return err
					}
					if r.Status != 200 {
						return Fail("revoking an unknown token %.10s…: want HTTP 200, got %s", tok, r.Snippet())
					}
				}
				return nil
			},
		},
		{
			ID: "REVOKE-04", Title: "revocation by an unknown or missing client gets invalid_client (400 or 401)", Area: "revoke",
			Source: "RFC 7009 §2.2.1 via " + src2026 + " (Revocation)",
			Run: func(ctx context.Context, e *Env) error {
				for _, cid := range []string{"unknown-" + randomString(8), ""} {
					r, err := e.revoke(ctx, cid, "unknown-"+randomString(16))
					if err != nil {
						return err
					}
					// RFC 6749 §5.2: 401 when the client authenticated through
					// the Authorization header, which a public client does not.
					if err := wantOAuthError(r, 0, "invalid_client"); err != nil {
						return Fail("client_id %q: %v", cid, err)
					}
				}
				return nil
			},
		},
		{
			ID: "REVOKE-05", Title: "another client cannot revoke a client's refresh token (200, and the token still works)",
			Area: "revoke", Source: srcRevocation, Needs: approval,
			Run: func(ctx context.Context, e *Env) error {
				cid, p, other, err := e.offlineTokensAndOther(ctx)
				if err != nil {
					return err
				}
				r, err := e.revoke(ctx, other, p.Refresh)
				if err != nil {
					return err
				}
				if r.Status != 200 {
					return Fail("revoking another client's token: want HTTP 200 (RFC 7009 §2.2), got %s", r.Snippet())
				}
				if err := e.wantWorks(ctx, p.Access, "after another client tried to revoke the family"); err != nil {
					return err
				}
				_, err = e.refreshed(ctx, cid, p.Refresh, "the owner's refresh after another client tried to revoke it")
				return err
			},
		},
	}
}
