package conformance

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// The mcp profile's token endpoint checks: errors, single-use codes and the
// revocation of what a replayed code issued, and audience binding.

const srcAudience = srcMCPAuth + " §Token audience binding and validation"

// mcpExchange runs the code flow and exchanges the code, returning the
// grant (to replay it) and the answer.
func (e *Env) mcpExchange(ctx context.Context, s *mcpSite) (*grant, *Response, error) {
	g, _, err := e.mcpGrant(ctx, s.scope())
	if err != nil {
		return nil, nil, err
	}
	r, err := e.exchange(ctx, g)
	return g, r, err
}

// mcpExchangedOnce runs the code flow asking scope and redeems the code,
// wanting a token, for the checks that then replay the code: the grant and
// the access token.
func (e *Env) mcpExchangedOnce(ctx context.Context, scope string) (*grant, string, error) {
	g, _, err := e.mcpGrant(ctx, scope)
	if err != nil {
		return nil, "", err
	}
	tok, err := e.redeemOnce(ctx, g, "the first exchange")
	return g, tok, e.blockedBy(stepSignIn, err)
}

// mcpWantCodeRefused presents g's code to the token endpoint, raw, and
// wants 400 invalid_grant: it was spent, or it expired.
func (e *Env) mcpWantCodeRefused(ctx context.Context, s *mcpSite, g *grant) error {
	r, err := e.tokenRequest(ctx, s, g.exchangeForm())
	if err != nil {
		return err
	}
	return wantOAuthError(r, 400, "invalid_grant")
}

// mcpRedeemEdited runs the code flow and redeems the code with the token
// request's form edited by edit, for the checks that the server refuses it.
func (e *Env) mcpRedeemEdited(ctx context.Context, s *mcpSite, edit func(url.Values)) (*Response, error) {
	g, _, err := e.mcpGrant(ctx, s.scope())
	if err != nil {
		return nil, err
	}
	f := g.exchangeForm()
	edit(f)
	return e.tokenRequest(ctx, s, f)
}

// mcpTokenObject runs the code flow and returns the successful token
// response as an object.
func (e *Env) mcpTokenObject(ctx context.Context, s *mcpSite) (*Response, object, error) {
	_, r, err := e.mcpExchange(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if _, err := accessToken(r); err != nil {
		return nil, nil, err
	}
	o, err := decodeObject(r)
	return r, o, err
}

// mcpAccepts reports whether the MCP endpoint serves a request with tok.
func (e *Env) mcpAccepts(ctx context.Context, s *mcpSite, tok string) (bool, *Response, error) {
	r, err := e.postMCPAt(ctx, s.mcpURL, "Bearer "+tok)
	if err != nil {
		return false, nil, err
	}
	return r.Status >= 200 && r.Status < 300, r, nil
}

// mcpWantServed posts initialize with Authorization auth and wants HTTP
// 200; want says what was expected in the failure.
func (e *Env) mcpWantServed(ctx context.Context, s *mcpSite, auth, want string) error {
	r, err := e.postMCPAt(ctx, s.mcpURL, auth)
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return Fail("%s, got %s", want, r.Snippet())
	}
	return nil
}

// mcpWantRefused fails, saying what and the answer, when the MCP endpoint
// accepts tok; a transport error comes back as is.
func (e *Env) mcpWantRefused(ctx context.Context, s *mcpSite, tok, what string) error {
	ok, m, err := e.mcpAccepts(ctx, s, tok)
	if err != nil {
		return err
	}
	if ok {
		return Fail("%s: %s", what, m.Snippet())
	}
	return nil
}

// tokenRequest posts a raw form to the token endpoint.
func (e *Env) tokenRequest(ctx context.Context, s *mcpSite, f url.Values) (*Response, error) {
	return e.PostForm(ctx, s.meta.TokenEndpoint, f)
}

// mcpClientTokenRequest posts form f as the profile's client (client_id
// set) to the token endpoint, for the checks of its error answers.
func (e *Env) mcpClientTokenRequest(ctx context.Context, s *mcpSite, f url.Values) (*Response, error) {
	cid, err := e.mcpClient(ctx)
	if err != nil {
		return nil, err
	}
	f.Set("client_id", cid)
	return e.tokenRequest(ctx, s, f)
}

func mcpTokenChecks() []Check {
	approval := []Need{NeedApproval}
	const srcCode = "RFC 6749 §4.1.2 and §4.1.3; OAuth 2.1 §4.1.3"
	return []Check{
		mcpCheck("MCP-54", areaToken, "the token response has an access_token and token_type Bearer (or DPoP)",
			"RFC 6749 §5.1; RFC 6750 §4; "+srcTokenUse, Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, o, err := e.mcpTokenObject(ctx, s)
				if err != nil {
					return err
				}
				tt, err := o.str("token_type")
				if err != nil {
					return err
				}
				if !strings.EqualFold(tt, "Bearer") && !strings.EqualFold(tt, "DPoP") {
					return Fail("token_type: want Bearer, got %q", tt)
				}
				return nil
			}),
		mcpCheck("MCP-55", areaToken, "the token response is sent with Cache-Control: no-store",
			"RFC 6749 §5.1 (MUST include no-store)", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, r, err := e.mcpExchange(ctx, s)
				if err != nil {
					return err
				}
				if !strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-store") {
					return Fail("Cache-Control: want no-store, got %q", r.Header.Get("Cache-Control"))
				}
				return nil
			}),
		mcpCheck("MCP-56", areaToken, "an unknown grant_type gets 400 unsupported_grant_type",
			"RFC 6749 §5.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpClientTokenRequest(ctx, s, url.Values{"grant_type": {"urn:example:no-such-grant"}})
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "unsupported_grant_type")
			}),
		mcpCheck("MCP-57", areaToken, "a token request without grant_type gets 400 invalid_request",
			"RFC 6749 §5.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpClientTokenRequest(ctx, s, url.Values{"code": {randomString(16)}})
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_request", "unsupported_grant_type")
			}),
		mcpCheck("MCP-58", areaToken, "a code the server never issued gets 400 invalid_grant",
			"RFC 6749 §5.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpClientTokenRequest(ctx, s, url.Values{"grant_type": {"authorization_code"}, "code": {randomString(24)},
					"redirect_uri": {e.redirectURI()}, "code_verifier": {randomString(40)}})
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpCheck("MCP-59", areaToken, "token endpoint errors are JSON (application/json)",
			"RFC 6749 §5.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpClientTokenRequest(ctx, s, url.Values{"grant_type": {"authorization_code"}, "code": {randomString(24)}})
				if err != nil {
					return err
				}
				if r.Status < 400 {
					return Fail("want an error for a made-up code, got %s", r.Snippet())
				}
				return wantJSONType(r)
			}),
		mcpCheck("MCP-60", areaToken, "an authorization code is single use: the second exchange gets invalid_grant",
			srcCode, Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				g, _, err := e.mcpExchangedOnce(ctx, s.scope())
				if err != nil {
					return err
				}
				return e.mcpWantCodeRefused(ctx, s, g)
			}),
		mcpCheck("MCP-61", areaToken, "replaying a code revokes the access token issued for it",
			"RFC 6749 §4.1.2 (SHOULD revoke); OAuth 2.1 §4.1.3; RFC 9700 §4.5", Should, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				// Without offline_access: the access token alone must go,
				// not only through its refresh family.
				g, tok, err := e.mcpExchangedOnce(ctx, withoutScope(s.scope(), "offline_access"))
				if err != nil {
					return err
				}
				if ok, m, err := e.mcpAccepts(ctx, s, tok); err != nil {
					return err
				} else if !ok {
					return setupFail("using the token before the replay", Fail("%s", m.Snippet()))
				}
				if _, err := e.tokenRequest(ctx, s, g.exchangeForm()); err != nil {
					return err
				}
				return e.mcpWantRefused(ctx, s, tok, "after the code was replayed its access token still works")
			}),
		mcpCheck("MCP-62", areaToken, "a code redeemed with another redirect_uri than the authorization request's gets invalid_grant",
			"RFC 6749 §4.1.3; OAuth 2.1 §4.1.3", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRedeemEdited(ctx, s, func(f url.Values) { f.Set("redirect_uri", e.redirectURI()+"/other") })
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpCheck("MCP-63", areaToken, "a code redeemed by another client gets invalid_grant (or invalid_client)",
			"RFC 6749 §4.1.3 (ensure the code was issued to the client)", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				g, _, err := e.mcpGrant(ctx, s.scope())
				if err != nil {
					return err
				}
				other, err := e.mcpOtherClient(ctx)
				if err != nil {
					return err
				}
				f := g.exchangeForm()
				f.Set("client_id", other)
				r, err := e.tokenRequest(ctx, s, f)
				if err != nil {
					return err
				}
				return wantOAuthError(r, 0, "invalid_grant", "invalid_client")
			}),
		mcpCheck("MCP-64", areaAudience, "a token asked for another resource is not accepted by this MCP server",
			srcAudience+" (MUST validate the audience); RFC 8707 §2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				other := "https://other-resource.example/mcp"
				g, _, err := e.mcpAuthorize(ctx, s, "", s.scope(), func(q url.Values) { q.Set("resource", other) })
				if err != nil {
					return err
				}
				if g.Code == "" {
					return nil // refused at the authorization endpoint (invalid_target)
				}
				f := g.exchangeForm()
				f.Set("resource", other)
				r, err := e.tokenRequest(ctx, s, f)
				if err != nil {
					return err
				}
				tok, err := accessToken(r)
				if err != nil {
					return nil // refused at the token endpoint
				}
				return e.mcpWantRefused(ctx, s, tok, fmt.Sprintf("a token issued for %s was accepted by %s", other, s.mcpURL))
			}),
		// Information: the MCP specification asks clients to send resource
		// (RFC 8707), not authorization servers to implement it; MCP-64
		// judges what matters, the token's audience at the MCP server.
		mcpCheck("MCP-65", areaAudience, "the token endpoint refuses a resource the authorization request did not name",
			"RFC 8707 §2.2; "+srcAudience, Info, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRedeemEdited(ctx, s, func(f url.Values) { f.Set("resource", "https://other-resource.example/mcp") })
				if err != nil {
					return err
				}
				if r.Status == 200 {
					return Fail("a token was issued for a resource the grant did not include: %s", r.Snippet())
				}
				return wantOAuthError(r, 400, "invalid_target", "invalid_grant")
			}),
	}
}

// withoutScope is scope without drop.
func withoutScope(scope, drop string) string {
	var out []string
	for _, sc := range strings.Fields(scope) {
		if sc != drop {
			out = append(out, sc)
		}
	}
	return strings.Join(out, " ")
}
