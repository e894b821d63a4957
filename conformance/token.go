package conformance

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"
)

// badTokenRequests are error cases at /oauth/token that need no approval.
func (e *Env) badTokenRequests(ctx context.Context) ([]*Response, error) {
	cid, err := e.client(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []*Response
	for _, form := range []url.Values{
		{"grant_type": {"authorization_code"}, "code": {randomString(16)}, "redirect_uri": {loopbackRedirect}, "client_id": {cid}, "code_verifier": {randomString(32)}},
		{"grant_type": {"password"}, "username": {"u"}, "password": {"p"}, "client_id": {cid}},
		{"client_id": {cid}},
	} {
		r, err := e.PostForm(ctx, "/oauth/token", form)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	r, err := e.PostJSON(ctx, "/oauth/token", map[string]string{"grant_type": "authorization_code", "code": "x", "client_id": cid})
	if err != nil {
		return nil, err
	}
	return append(out, r), nil
}

// everyTokenError is the check c that every answer to badTokenRequests passes want.
func everyTokenError(c Check, want func(r *Response) error) Check {
	c.Run = func(ctx context.Context, e *Env) error {
		rs, err := e.badTokenRequests(ctx)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := want(r); err != nil {
				return err
			}
		}
		return nil
	}
	return c
}

// tokenError is a check that a form posted to /oauth/token gets 400 error.
func tokenError(id, title string, code []string, build func(cid string) url.Values) Check {
	return probe(Check{ID: id, Title: title, Area: "token", Source: "RFC 6749 §5.2 via decisions.md §HTTP status of OAuth errors"},
		asClient(func(cid string) sender { return postForm("/oauth/token", build(cid)) }),
		oauthErr(400, code...))
}

// exchangeError is a check that exchanging a fresh code, with the form edited,
// gets 400 with one of codes.
func exchangeError(id, title, source string, edit func(ctx context.Context, e *Env, f url.Values) error, codes ...string) Check {
	return Check{
		ID: id, Title: title, Area: "token", Source: source, Needs: []Need{NeedApproval},
		Run: func(ctx context.Context, e *Env) error {
			g, err := e.authCode(ctx)
			if err != nil {
				return err
			}
			f := g.exchangeForm()
			if err := edit(ctx, e, f); err != nil {
				return err
			}
			r, err := e.PostForm(ctx, "/oauth/token", f)
			if err != nil {
				return err
			}
			return wantOAuthError(r, 400, codes...)
		},
	}
}

// freshExchanged exchanges a fresh code (see freshExchange).
func freshExchanged(ctx context.Context, e *Env) (*Response, error) {
	_, r, err := e.freshExchange(ctx)
	return r, err
}

// codeReplayed redeems a fresh code a second time (see exchangedOnce).
func codeReplayed(ctx context.Context, e *Env) (*Response, error) {
	g, _, err := e.exchangedOnce(ctx)
	if err != nil {
		return nil, err
	}
	return e.exchange(ctx, g)
}

// codeAge is a check that a code exchanged after age is accepted or refused.
func codeAge(id, title string, age time.Duration, valid bool) Check {
	j := oauthErr(400, "invalid_grant", "expired_token")
	if valid {
		j = tokenIssued
	}
	return probe(Check{ID: id, Title: title, Area: "token", Source: "contract §Authorization code (10 minutes)",
		Needs: []Need{NeedApproval, NeedTimeTravel}, Wait: age},
		func(ctx context.Context, e *Env) (*Response, error) {
			g, err := e.authCode(ctx)
			if err != nil {
				return nil, err
			}
			if err := e.Advance(ctx, age); err != nil {
				return nil, err
			}
			return e.exchange(ctx, g)
		}, j)
}

func tokenChecks() []Check {
	const errSrc = "RFC 6749 §5.2 via decisions.md"
	return []Check{
		tokenError("TOKEN-01", "an unknown code gets 400 invalid_grant", []string{"invalid_grant"}, func(cid string) url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {randomString(16)}, "redirect_uri": {loopbackRedirect}, "client_id": {cid}, "code_verifier": {randomString(32)}}
		}),
		tokenError("TOKEN-02", "a request without code gets 400 invalid_request", []string{"invalid_request"}, func(cid string) url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {loopbackRedirect}, "client_id": {cid}, "code_verifier": {randomString(32)}}
		}),
		tokenError("TOKEN-03", "an unsupported grant_type gets 400 unsupported_grant_type", []string{"unsupported_grant_type"}, func(cid string) url.Values {
			return url.Values{"grant_type": {"password"}, "username": {"u"}, "password": {"p"}, "client_id": {cid}}
		}),
		tokenError("TOKEN-04", "a request without grant_type gets 400 invalid_request", []string{"invalid_request", "unsupported_grant_type"}, func(cid string) url.Values {
			return url.Values{"code": {randomString(16)}, "client_id": {cid}}
		}),
		probe(Check{ID: "TOKEN-05", Title: "a JSON body (not form-encoded) gets 400 invalid_request", Area: "token",
			Source: "contract §POST /oauth/token (application/x-www-form-urlencoded); " + errSrc},
			asClient(func(cid string) sender {
				return postJSON("/oauth/token", map[string]string{"grant_type": "authorization_code", "code": "x", "client_id": cid})
			}),
			oauthErr(400, "invalid_request")),
		everyTokenError(Check{ID: "TOKEN-06", Title: "every token endpoint error carries Cache-Control: no-store", Area: "token",
			Source: "decisions.md §HTTP status of OAuth errors; RFC 6749 §5.1"},
			func(r *Response) error {
				if !strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-store") {
					return Fail("want Cache-Control: no-store on %s, got %q", r.Snippet(), r.Header.Get("Cache-Control"))
				}
				return nil
			}),
		everyTokenError(Check{ID: "TOKEN-07", Title: "every token endpoint error is JSON (Content-Type application/json)", Area: "token",
			Source: "contract §Errors; RFC 6749 §5.2"},
			func(r *Response) error {
				if r.ContentType() != "application/json" {
					return Fail("want Content-Type application/json on %s, got %q", r.Snippet(), r.Header.Get("Content-Type"))
				}
				return nil
			}),
		probe(Check{ID: "TOKEN-08", Title: "exchanging a code returns a Bearer token with expires_in 86400", Area: "token",
			Source: "contract §Token response", Needs: []Need{NeedApproval}},
			freshExchanged,
			func(_ *Env, r *Response) error {
				t, err := wantTokenResponse(r)
				if err != nil {
					return err
				}
				if !strings.EqualFold(t.TokenType, "Bearer") {
					return Fail("token_type: want Bearer, got %q", t.TokenType)
				}
				if t.ExpiresIn != 86400 {
					return Fail("expires_in: want 86400, got %d", t.ExpiresIn)
				}
				return nil
			}),
		probe(Check{ID: "TOKEN-09", Title: "the token response is JSON with Cache-Control: no-store and Pragma: no-cache", Area: "token",
			Source: "decisions.md §HTTP status of OAuth errors; RFC 6749 §5.1", Needs: []Need{NeedApproval}},
			freshExchanged,
			all(tokenIssued, jsonType, noStore, func(_ *Env, r *Response) error {
				if !strings.Contains(strings.ToLower(r.Header.Get("Pragma")), "no-cache") {
					return Fail("Pragma: want no-cache, got %q", r.Header.Get("Pragma"))
				}
				return nil
			})),
		probe(Check{ID: "TOKEN-10", Title: "a code exchanged twice gets invalid_grant the second time", Area: "token",
			Source: "contract §Authorization code (exchanged once); RFC 6749 §4.1.2", Needs: []Need{NeedApproval}},
			codeReplayed, oauthErr(400, "invalid_grant")),
		{
			ID: "TOKEN-11", Title: "reusing a code revokes the token issued from it", Area: "token",
			Source: "RFC 6749 §4.1.2 via decisions.md §Token endpoint", Needs: []Need{NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				g, tok, err := e.exchangedOnce(ctx)
				if err != nil {
					return err
				}
				if p, err := e.GetBearer(ctx, "/api/ping", tok); err != nil || p.Status != 200 {
					return setupFail("using the token before the replay", errOr(err, p))
				}
				if _, err := e.exchange(ctx, g); err != nil {
					return err
				}
				p, err := e.GetBearer(ctx, "/api/ping", tok)
				if err != nil {
					return err
				}
				if p.Status != 401 {
					return Fail("after the code was replayed, want its token refused (401), got %s", p.Snippet())
				}
				return nil
			},
		},
		exchangeError("TOKEN-12", "a code_verifier that does not match the challenge gets invalid_grant",
			"RFC 7636 §4.6 via decisions.md §Token endpoint",
			func(_ context.Context, _ *Env, f url.Values) error {
				f.Set("code_verifier", randomString(32))
				return nil
			}, "invalid_grant"),
		exchangeError("TOKEN-13", "a malformed code_verifier (too short) gets invalid_request",
			"RFC 7636 §4.1 via decisions.md §Token endpoint",
			func(_ context.Context, _ *Env, f url.Values) error { f.Set("code_verifier", "short"); return nil }, "invalid_request"),
		exchangeError("TOKEN-14", "an exchange without code_verifier gets invalid_request",
			"contract §Authentication 3 (PKCE required); RFC 7636 §4.5",
			func(_ context.Context, _ *Env, f url.Values) error { f.Del("code_verifier"); return nil }, "invalid_request"),
		exchangeError("TOKEN-15", "an exchange with another registered redirect_uri gets invalid_grant",
			"RFC 6749 §4.1.3 via decisions.md §Token endpoint",
			func(_ context.Context, _ *Env, f url.Values) error { f.Set("redirect_uri", httpsRedirect); return nil }, "invalid_grant"),
		exchangeError("TOKEN-16", "an exchange by another client gets invalid_grant",
			"RFC 6749 §4.1.3 via decisions.md §Token endpoint",
			func(ctx context.Context, e *Env, f url.Values) error {
				other, err := e.client(ctx, 1)
				if err != nil {
					return err
				}
				f.Set("client_id", other)
				return nil
			}, "invalid_grant"),
		codeAge("TOKEN-17", "a code is still accepted 9m59s after issue", 9*time.Minute+59*time.Second, true),
		codeAge("TOKEN-18", "a code is refused 10m01s after issue (invalid_grant or expired_token)", 10*time.Minute+time.Second, false),
		{
			ID: "TOKEN-19", Title: "the access token is a JWT with sub, iat and exp = iat + 24 h", Area: "token",
			Source: "contract §Access token (JWT)", Needs: []Need{NeedApproval},
			Run: given((*Env).tokenJWT, func(ctx context.Context, e *Env, t *accessJWT) error {
				if err := wantFilledClaim(t.Claims, "sub"); err != nil {
					return err
				}
				iat, err := numClaim(t.Claims, "iat")
				if err != nil {
					return err
				}
				exp, err := numClaim(t.Claims, "exp")
				if err != nil {
					return err
				}
				if exp-iat != 86400 {
					return Fail("exp - iat: want 86400 s, got %d s", exp-iat)
				}
				return nil
			}),
		},
		{
			ID: "TOKEN-20", Title: "the JWT is HS256 with jti, iss = {base} and aud = {base}/mcp", Area: "token",
			Source: "decisions.md §JWTs", Needs: []Need{NeedApproval},
			Run: given((*Env).tokenJWT, func(ctx context.Context, e *Env, t *accessJWT) error {
				if t.Header["alg"] != "HS256" {
					return Fail("header alg: want HS256, got %v", t.Header["alg"])
				}
				if err := wantFilledClaim(t.Claims, "jti"); err != nil {
					return err
				}
				if t.Claims["iss"] != e.BaseURL() {
					return Fail("claim iss: want %q, got %v", e.BaseURL(), t.Claims["iss"])
				}
				if !audContains(t.Claims["aud"], e.URL("/mcp")) {
					return Fail("claim aud: want %q, got %v", e.URL("/mcp"), t.Claims["aud"])
				}
				return nil
			}),
		},
		{
			ID: "TOKEN-21", Title: "GET on the token, revocation and registration endpoints gets 405 with Allow: POST", Area: "token",
			Source: "RFC 9110 §15.5.6 via " + src2026 + " (Methods)",
			Run: func(ctx context.Context, e *Env) error {
				for _, path := range []string{"/oauth/token", "/oauth/revoke", "/oauth/register"} {
					r, err := e.Get(ctx, path)
					if err != nil {
						return err
					}
					if r.Status != 405 {
						return Fail("GET %s: want HTTP 405, got %s", path, r.Snippet())
					}
					allow := strings.Split(strings.ReplaceAll(r.Header.Get("Allow"), " ", ""), ",")
					if !slices.Contains(allow, "POST") {
						return Fail("GET %s: want an Allow header naming POST, got %q", path, r.Header.Get("Allow"))
					}
				}
				return nil
			},
		},
	}
}

// accessJWT is an access token and its JWT header and claims.
type accessJWT struct {
	Raw            string
	Header, Claims map[string]any
}

// tokenJWT obtains an access token and decodes it, failing when it is not a JWT.
func (e *Env) tokenJWT(ctx context.Context) (*accessJWT, error) {
	tok, err := e.token(ctx)
	if err != nil {
		return nil, err
	}
	header, claims, err := decodeJWT(tok)
	if err != nil {
		return nil, Fail("access_token: %v", err)
	}
	return &accessJWT{Raw: tok, Header: header, Claims: claims}, nil
}

// audContains accepts aud as a string or an array (RFC 7519 §4.1.3).
func audContains(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if x == want {
				return true
			}
		}
	}
	return false
}

// errOr describes a failed request: the transport error, or the response.
func errOr(err error, r *Response) error {
	if err != nil {
		return err
	}
	return Fail("got %s", r.Snippet())
}
