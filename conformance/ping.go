package conformance

import (
	"context"
	"fmt"
	"time"
)

// mcpInitialize is a Streamable HTTP request an MCP client sends first.
var mcpInitialize = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpauth-conformance","version":"0"}}}`)

// postMCP sends an MCP initialize request with the given Authorization value
// ("" for none).
func (e *Env) postMCP(ctx context.Context, authorization string) (*Response, error) {
	return e.postMCPAt(ctx, "/mcp", authorization)
}

// postMCPAt is postMCP to another MCP URL (the mcp profile's).
func (e *Env) postMCPAt(ctx context.Context, mcpURL, authorization string) (*Response, error) {
	h := headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if authorization != "" {
		h.Set("Authorization", authorization)
	}
	return e.Do(ctx, "POST", mcpURL, h, mcpInitialize)
}

// mcpAs sends an MCP initialize request with the given Authorization value.
func mcpAs(authorization string) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return e.postMCP(ctx, authorization) }
}

// forgedClaims are plausible claims for a token the server never issued.
func (e *Env) forgedClaims() map[string]any {
	now := e.opts.Now().Unix()
	return map[string]any{
		"sub": "conformance-forged", "iat": now - 60, "exp": now + 3600,
		"jti": randomString(8), "iss": e.BaseURL(), "aud": e.URL("/mcp"),
	}
}

// refused is a check that /api/ping refuses the token built by forge.
func refused(id, title, source string, needs []Need, forge func(ctx context.Context, e *Env) (string, error)) Check {
	return probe(Check{ID: id, Title: title, Area: "ping", Source: source, Needs: needs},
		func(ctx context.Context, e *Env) (*Response, error) {
			tok, err := forge(ctx, e)
			if err != nil {
				return nil, err
			}
			return e.GetBearer(ctx, "/api/ping", tok)
		},
		status(401))
}

// pinged sends GET /api/ping with tok as a bearer token.
func pinged(tok string) sender { return get("/api/ping", "Authorization", "Bearer "+tok) }

// fromToken forges a token from a real one.
func fromToken(edit func(tok string) (string, error)) func(ctx context.Context, e *Env) (string, error) {
	return func(ctx context.Context, e *Env) (string, error) {
		tok, err := e.token(ctx)
		if err != nil {
			return "", err
		}
		return edit(tok)
	}
}

// pingAs calls /api/ping with cred as the bearer: the user_id of a
// well-formed 200, a transport error as is, or pingOK's failure.
func (e *Env) pingAs(ctx context.Context, cred string) (string, error) {
	r, err := e.GetBearer(ctx, "/api/ping", cred)
	if err != nil {
		return "", err
	}
	return pingOK(r)
}

// pingOK checks a successful ping and returns its user_id.
func pingOK(r *Response) (string, error) {
	o, err := okObject(r, "HTTP 200")
	if err != nil {
		return "", err
	}
	if err := o.wantStr("status", "ok"); err != nil {
		return "", err
	}
	return o.filled("user_id")
}

// tokenAge is a check that a fresh JWT is accepted or refused after age.
func tokenAge(id, title string, age time.Duration, valid bool) Check {
	j := status(401, fmt.Sprintf("HTTP 401 for a token %s old", age))
	if valid {
		j = pingAnswer
	}
	return probe(Check{ID: id, Title: title, Area: "ping", Source: "contract §Lifetimes (JWT 24 h); decisions.md §JWTs (leeway at most 30 s)",
		Needs: []Need{NeedApproval, NeedTimeTravel}, Wait: age},
		withCredential((*Env).freshToken, func(tok string) sender { return after(age, pinged(tok)) }), j)
}

func pingChecks() []Check {
	const contract = "contract §GET /api/ping"
	return []Check{
		probe(Check{ID: "PING-01", Title: "/api/ping without credentials gets 401", Area: "ping", Source: contract},
			get("/api/ping"), status(401)),
		refused("PING-02", "a garbage bearer token gets 401", contract, nil,
			func(context.Context, *Env) (string, error) { return "not-a-token-" + randomString(8), nil }),
		refused("PING-03", "an unsigned JWT (alg none) gets 401", "decisions.md §JWTs (HS256 only)", nil,
			func(_ context.Context, e *Env) (string, error) {
				return signJWT(map[string]any{"alg": "none", "typ": "JWT"}, e.forgedClaims(), nil), nil
			}),
		refused("PING-04", "a JWT signed with another key gets 401", "contract §Access token (validated on every request)", nil,
			func(_ context.Context, e *Env) (string, error) {
				return signJWT(map[string]any{"alg": "HS256", "typ": "JWT"}, e.forgedClaims(), []byte(randomString(32))), nil
			}),
		refused("PING-05", "a real JWT with one signature character changed gets 401", "contract §Access token (validated on every request)",
			[]Need{NeedApproval}, fromToken(func(tok string) (string, error) { return tamperSignature(tok), nil })),
		refused("PING-06", "a real JWT with its claims changed (another sub) gets 401", "contract §Access token (validated on every request)",
			[]Need{NeedApproval}, fromToken(func(tok string) (string, error) {
				_, claims, err := decodeJWT(tok)
				if err != nil {
					return "", setupFail("reading the token", err)
				}
				claims["sub"] = "someone-else"
				return replaceClaims(tok, claims), nil
			})),
		refused("PING-07", "a real JWT re-headed as alg none without signature gets 401", "decisions.md §JWTs (HS256 only)",
			[]Need{NeedApproval}, fromToken(func(tok string) (string, error) {
				_, claims, err := decodeJWT(tok)
				if err != nil {
					return "", setupFail("reading the token", err)
				}
				return signJWT(map[string]any{"alg": "none", "typ": "JWT"}, claims, nil), nil
			})),
		probe(Check{ID: "PING-08", Title: "a valid token gets 200 with status ok and the user_id", Area: "ping", Source: contract,
			Needs: []Need{NeedApproval}},
			withToken(pinged), all(pingAnswer, jsonType)),
		{
			ID: "PING-09", Title: "user_id is the token's sub", Area: "ping", Source: "contract §Access token (sub: user ID)",
			Needs: []Need{NeedApproval},
			Run: given((*Env).tokenJWT, func(ctx context.Context, e *Env, t *accessJWT) error {
				uid, err := e.pingAs(ctx, t.Raw)
				if err != nil {
					return err
				}
				if uid != t.Claims["sub"] {
					return Fail("user_id %q differs from sub %v", uid, t.Claims["sub"])
				}
				return nil
			}),
		},
		probe(Check{ID: "PING-10", Title: "the auth scheme is case-insensitive (bearer)", Area: "ping", Source: "RFC 6750 §2.1; RFC 9110 §11.1",
			Severity: Should, Needs: []Need{NeedApproval}},
			withToken(func(tok string) sender { return get("/api/ping", "Authorization", "bearer "+tok) }),
			pingAnswer),
		tokenAge("PING-11", "a JWT is still accepted 23h59m after issue", 23*time.Hour+59*time.Minute, true),
		tokenAge("PING-12", "a JWT is refused 24 h + 31 s after issue", 24*time.Hour+31*time.Second, false),
		probe(Check{ID: "PING-13", Title: "/mcp without credentials gets 401", Area: "ping", Source: "contract §Authentication 1"},
			mcpNone, status(401)),
		probe(Check{ID: "PING-14", Title: "/mcp accepts a valid token (initialize gets 200)", Area: "ping",
			Source: "contract §Authentication 1; decisions.md §The MCP endpoint", Needs: []Need{NeedApproval}},
			withToken(func(tok string) sender { return mcpAs("Bearer " + tok) }),
			status(200, "HTTP 200 for initialize")),
		probe(Check{ID: "PING-15", Title: "a token in the query string is not accepted", Area: "ping",
			Source: "MCP authorization (2025-11-25) §Access token usage; RFC 6750 §2.3", Severity: Should,
			Needs: []Need{NeedApproval}},
			withToken(func(tok string) sender { return get("/api/ping?access_token=" + tok) }),
			status(401, "HTTP 401 (tokens go in the Authorization header only)")),
	}
}
