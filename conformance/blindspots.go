package conformance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// Checks of what an attacker, or a sloppy proxy in front of the service,
// would try beyond the happy paths: credentials where they leak (the query
// string), cross-origin reads, redirects that replay a form, headers that
// rename the service.

const evilOrigin = "https://evil.example"

// corsCheck is a check that path never lets another origin read its answers
// with credentials: neither a preflight nor the request itself reflects the
// Origin (or allows any) together with Access-Control-Allow-Credentials.
func corsCheck(id, path string, send func(ctx context.Context, e *Env, origin string) (*Response, error)) Check {
	return Check{
		ID: id, Title: "CORS on " + path + " never allows another origin with credentials", Area: "headers",
		Source: "Fetch standard §CORS protocol; RFC 6750 §5.1 via decisions.md §Bearer errors",
		Run: func(ctx context.Context, e *Env) error {
			pre, err := e.Do(ctx, http.MethodOptions, path, headers("Origin", evilOrigin,
				"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type"), nil)
			if err != nil {
				return err
			}
			r, err := send(ctx, e, evilOrigin)
			if err != nil {
				return err
			}
			for _, x := range []struct {
				what string
				r    *Response
			}{{"the preflight", pre}, {"the request", r}} {
				allow := x.r.Header.Get("Access-Control-Allow-Origin")
				creds := strings.EqualFold(strings.TrimSpace(x.r.Header.Get("Access-Control-Allow-Credentials")), "true")
				if (allow == evilOrigin || allow == "*" || allow == "null") && creds {
					return Fail("%s from Origin %s got Access-Control-Allow-Origin %q with Access-Control-Allow-Credentials: true: any web page can call %s as the user",
						x.what, evilOrigin, allow, path)
				}
			}
			return nil
		},
	}
}

func blindSpotChecks() []Check {
	return []Check{
		probe(Check{ID: "PING-16", Title: "a token in the query string is not accepted on /mcp either", Area: "ping",
			Source: "MCP authorization (2025-11-25) §Access token usage; RFC 6750 §2.3", Needs: []Need{NeedApproval}},
			withToken(func(tok string) sender {
				return func(ctx context.Context, e *Env) (*Response, error) {
					return e.postMCPAt(ctx, "/mcp?access_token="+url.QueryEscape(tok), "")
				}
			}),
			status(401, "HTTP 401 (tokens go in the Authorization header only)")),
		{
			ID: "PING-17", Title: "/mcp is stateless: initialize sets no Mcp-Session-Id, GET gets 405 with Allow", Area: "ping",
			Source: "MCP 2026-07-28 (stateless Streamable HTTP) via " + src2026 + " (/mcp)", Needs: []Need{NeedApproval},
			Run: given((*Env).token, func(ctx context.Context, e *Env, tok string) error {
				r, err := e.postMCP(ctx, "Bearer "+tok)
				if err != nil {
					return err
				}
				if r.Status != 200 {
					return setupFail("initialize", errOr(nil, r))
				}
				if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
					return Fail("initialize answered with Mcp-Session-Id %q: a stateless server keeps no session", sid)
				}
				g, err := e.Get(ctx, "/mcp", "Authorization", "Bearer "+tok, "Accept", "text/event-stream")
				if err != nil {
					return err
				}
				if g.Status != 405 || !strings.Contains(g.Header.Get("Allow"), "POST") {
					return Fail("GET /mcp: want HTTP 405 with Allow naming POST (no stream to open), got %s, Allow %q", g.Snippet(), g.Header.Get("Allow"))
				}
				return nil
			}),
		},
		corsCheck("HDR-09", "/api/ping", func(ctx context.Context, e *Env, origin string) (*Response, error) {
			return e.Get(ctx, "/api/ping", "Origin", origin, "Authorization", "Bearer garbage-"+randomString(8))
		}),
		corsCheck("HDR-10", "/mcp", func(ctx context.Context, e *Env, origin string) (*Response, error) {
			return e.Do(ctx, http.MethodPost, "/mcp", headers("Origin", origin, "Content-Type", "application/json",
				"Accept", "application/json, text/event-stream", "Authorization", "Bearer garbage-"+randomString(8)), mcpInitialize)
		}),
		{
			ID: "HDR-11", Title: "the metadata and the challenge ignore a forged Host or X-Forwarded-Host", Area: "headers",
			Source: "RFC 8414 §3.3 and RFC 9728 §3.3 (issuer and resource are fixed); RFC 9700 §4.1",
			Run: func(ctx context.Context, e *Env) error {
				// Compared with the plain answers, so that only what the
				// headers change counts here (DISC-07 judges the issuer).
				issuer, err := e.metadataStr(ctx, asPath, "issuer")
				if err != nil {
					return err
				}
				forged := []string{"X-Forwarded-Host", "attacker.example", "X-Forwarded-Proto", "https", "Forwarded", "host=attacker.example;proto=https"}
				for _, hdr := range [][]string{forged, append([]string{"Host", "attacker.example"}, forged...)} {
					r, err := e.Get(ctx, asPath, hdr...)
					if err != nil {
						return err
					}
					if r.Status == 200 {
						o, err := decodeObject(r)
						if err != nil {
							return err
						}
						if err := o.wantStr("issuer", issuer); err != nil {
							return Fail("with %s: %s: %v", hdr[0], hdr[1], err)
						}
					}
					c, err := e.Do(ctx, http.MethodPost, "/mcp", headers(append(hdr, "Content-Type", "application/json")...), mcpInitialize)
					if err != nil {
						return err
					}
					if c.Status == 401 {
						for _, ch := range parseChallenges(c.Header.Values("WWW-Authenticate")) {
							if u := ch.Params["resource_metadata"]; u != "" && !strings.HasPrefix(u, e.BaseURL()+"/") {
								return Fail("with %s: %s, the challenge sends clients to %s", hdr[0], hdr[1], u)
							}
						}
					}
				}
				return nil
			},
		},
		{
			ID: "HDR-12", Title: "pages for a signed-in user (consent, Settings) are not stored by shared caches (no-store or private)", Area: "headers",
			Source: "RFC 9111 §3 and §5.2.2 (a cookie does not keep a response out of a shared cache); RFC 9700 §4.1", Needs: []Need{NeedSession},
			Run: func(ctx context.Context, e *Env) error {
				consent, err := suiteConsent(ctx, e)
				if err != nil {
					return err
				}
				cs, err := e.SessionCookies(ctx)
				if err != nil {
					return err
				}
				settings, err := e.Get(ctx, "/settings", "Cookie", cookieHeader(cs), "Accept", "text/html")
				if err != nil {
					return err
				}
				if settings.Status != 200 {
					return setupFail("opening Settings", errOr(nil, settings))
				}
				for _, x := range []struct {
					what string
					r    *Response
				}{{"the consent page (it holds a CSRF token)", consent}, {"Settings (it shows the API key)", settings}} {
					cc := strings.ToLower(x.r.Header.Get("Cache-Control"))
					if !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
						return Fail("%s: want Cache-Control no-store or private, got %q: a shared cache may serve it to someone else", x.what, x.r.Header.Get("Cache-Control"))
					}
				}
				return nil
			},
		},
		{
			ID: "AUTHZ-27", Title: "approving consent redirects with 302 or 303, never 307/308 (which would re-post the form)", Area: "authorize",
			Source: "RFC 9700 §4.12; RFC 9110 §15.4", Needs: []Need{NeedSession},
			Run: func(ctx context.Context, e *Env) error {
				resp, err := e.postApproval(ctx, nil)
				if err != nil {
					return err
				}
				u, err := location(resp)
				if err != nil {
					return Fail("approving: %v", err)
				}
				if resp.Status != http.StatusFound && resp.Status != http.StatusSeeOther {
					return Fail("approval redirected with HTTP %d; want 302 or 303: a browser repeats the POST, CSRF token and all, to %s on a 307/308", resp.Status, u.Host)
				}
				if u.Query().Get("code") == "" {
					return Fail("the approval redirect carries no code: %s", u)
				}
				return nil
			},
		},
		{
			ID: "TOKEN-22", Title: "token request parameters in the URL query are not used (the body only)", Area: "token",
			Source: "RFC 6749 §3.2 and §4.1.3 (parameters in the form body); RFC 9700 §4.3", Severity: Should, Needs: []Need{NeedApproval},
			Run: given((*Env).authCode, func(ctx context.Context, e *Env, g *grant) error {
				r, err := e.PostRaw(ctx, "/oauth/token?"+g.exchangeForm().Encode(), "application/x-www-form-urlencoded", []byte{})
				if err != nil {
					return err
				}
				if r.Status == 200 {
					return Fail("a code sent in the URL query (which proxies log) was exchanged: %s", r.Snippet())
				}
				return nil
			}),
		},
	}
}
