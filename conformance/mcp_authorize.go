package conformance

import (
	"context"
	"net/url"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// The mcp profile's authorization endpoint checks: PKCE, exact redirect
// URIs, state and iss.

const srcPKCE = srcMCPAuth + " §Authorization code protection"

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
			"OAuth 2.1 §4.1.1 (code_challenge: 43 to 128 unreserved characters; S256's is 43) and §4.1.2.1 (invalid_request); RFC 7636 §4.2", Should, func(_ *Env, q url.Values) string {
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
				// A client of its own, and prompt=consent (OpenID Connect
				// Core §3.1.2.1; ignored where unknown, RFC 6749 §3.1):
				// consent the test user gave the shared clients is
				// remembered by many servers, and there is nothing to deny.
				cid, err := e.freshMCPClient(ctx, s)
				if err != nil {
					return err
				}
				g, err := e.mcpRequest(ctx, s, cid, s.scope())
				if err != nil {
					return err
				}
				e.approving.Add(1)
				u, err := e.approver().DenyConsent(ctx, editQuery(g.req.URL(), func(q url.Values) { q.Set("prompt", "consent") }))
				e.approving.Add(-1)
				if err != nil {
					return approverFail(err)
				}
				if u.Query().Get("code") != "" && u.Query().Get("error") == "" {
					return &InconclusiveError{Reason: "consent was remembered or not asked for: the server granted at once, without a consent page to deny, " +
						"to a newly registered client asking prompt=consent (" + redact.ElideGrants(u) + "); denial could not be tried",
						Flag: "--browser-command with a driver that can deny"}
				}
				if u.Query().Get("error") != "access_denied" || u.Query().Get("state") != g.req.State || u.Query().Get("code") != "" {
					return Fail("want error=access_denied with state %s and no code, got %s", g.req.State, redact.ElideGrants(u))
				}
				return nil
			}),
	}
}

// freshMCPClient is a client registered for the calling check alone, where
// the server has dynamic registration and the run uses no pre-registered
// client; else the check's client.
func (e *Env) freshMCPClient(ctx context.Context, s *mcpSite) (string, error) {
	if len(e.target.Clients) > 0 || s.meta.RegistrationEndpoint == "" {
		return e.mcpClient(ctx)
	}
	cid, err := e.registerMCPClient(ctx, s)
	if err != nil {
		return "", e.blockedBy(stepRegister, setupFail("registering a client of the check's own", err))
	}
	return cid, nil
}
