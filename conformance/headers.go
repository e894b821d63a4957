package conformance

import (
	"context"
	"strings"
)

// challenge is a parsed WWW-Authenticate challenge.
type challenge struct {
	Scheme string
	Params map[string]string
}

// parseChallenges reads the Bearer challenge from WWW-Authenticate values
// (RFC 9110 §11.6.1): a scheme, then comma-separated name=value or
// name="quoted value" parameters. Only what the checks need: one challenge
// per header value.
func parseChallenges(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		v = strings.TrimSpace(v)
		scheme, rest, _ := strings.Cut(v, " ")
		c := challenge{Scheme: scheme, Params: map[string]string{}}
		for rest = strings.TrimSpace(rest); rest != ""; {
			name, after, ok := strings.Cut(rest, "=")
			if !ok {
				break
			}
			name = strings.ToLower(strings.TrimSpace(strings.TrimLeft(name, ", ")))
			after = strings.TrimLeft(after, " ")
			var val string
			if strings.HasPrefix(after, `"`) {
				var b strings.Builder
				i := 1
				for ; i < len(after) && after[i] != '"'; i++ {
					if after[i] == '\\' && i+1 < len(after) {
						i++
					}
					b.WriteByte(after[i])
				}
				val, rest = b.String(), after[min(i+1, len(after)):]
			} else {
				val, rest, _ = strings.Cut(after, ",")
				val = strings.TrimSpace(val)
			}
			c.Params[name] = val
			rest = strings.TrimLeft(rest, " ,")
		}
		out = append(out, c)
	}
	return out
}

// bearerChallenge checks a 401 and its Bearer challenge; errParam is the
// expected error parameter ("" = must not be present, "-" = not checked).
func (e *Env) bearerChallenge(r *Response, errParam string) error {
	if r.Status != 401 {
		return Fail("want HTTP 401, got %s", r.Snippet())
	}
	var bearer *challenge
	for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			bearer = &c
			break
		}
	}
	if bearer == nil {
		return Fail("want WWW-Authenticate: Bearer …, got %q", r.Header.Values("WWW-Authenticate"))
	}
	if got, want := bearer.Params["resource_metadata"], e.URL(prmPath); got != want {
		return Fail("resource_metadata: want %q, got %q", want, got)
	}
	if got := bearer.Params["scope"]; got != "mcp" {
		return Fail(`scope: want "mcp", got %q`, got)
	}
	switch got := bearer.Params["error"]; errParam {
	case "-":
	case "":
		if got != "" {
			return Fail("error=%q although no credential was sent (RFC 6750 §3.1)", got)
		}
	default:
		if got != errParam {
			return Fail("error: want %q, got %q", errParam, got)
		}
	}
	return nil
}

// challengeCheck is a check on the 401 challenge of a request.
func challengeCheck(id, title string, sev Severity, errParam string, send sender) Check {
	return probe(Check{ID: id, Title: title, Area: "headers", Severity: sev,
		Source: "RFC 6750 §3 and RFC 9728 §5.1 via decisions.md §Bearer errors"},
		send, func(e *Env, r *Response) error { return e.bearerChallenge(r, errParam) })
}

func pingNone(ctx context.Context, e *Env) (*Response, error) { return e.Get(ctx, "/api/ping") }
func mcpNone(ctx context.Context, e *Env) (*Response, error)  { return e.postMCP(ctx, "") }
func pingGarbage(ctx context.Context, e *Env) (*Response, error) {
	return e.GetBearer(ctx, "/api/ping", "garbage-"+randomString(8))
}
func mcpGarbage(ctx context.Context, e *Env) (*Response, error) {
	return e.postMCP(ctx, "Bearer garbage-"+randomString(8))
}

func headerChecks() []Check {
	return []Check{
		challengeCheck("HDR-01", "401 from /api/ping without credentials: Bearer challenge with resource_metadata and scope", Must, "-", pingNone),
		challengeCheck("HDR-02", "401 from /mcp without credentials: Bearer challenge with resource_metadata and scope", Must, "-", mcpNone),
		challengeCheck("HDR-03", `401 from /api/ping with a bad token adds error="invalid_token"`, Must, "invalid_token", pingGarbage),
		challengeCheck("HDR-04", `401 from /mcp with a bad token adds error="invalid_token"`, Must, "invalid_token", mcpGarbage),
		challengeCheck("HDR-05", "a request without credentials gets no error code in the challenge", Should, "", pingNone),
		{
			ID: "HDR-06", Title: "the challenge's resource_metadata URL serves the protected resource metadata", Area: "headers",
			Source: "RFC 9728 §5.1",
			Run: func(ctx context.Context, e *Env) error {
				r, err := mcpNone(ctx, e)
				if err != nil {
					return err
				}
				var u string
				for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
					if strings.EqualFold(c.Scheme, "Bearer") {
						u = c.Params["resource_metadata"]
					}
				}
				if u == "" {
					return Fail("no resource_metadata in %q", r.Header.Values("WWW-Authenticate"))
				}
				if !strings.HasPrefix(u, e.BaseURL()+"/") {
					return Fail("resource_metadata %q is not on the service's origin; not following it", u)
				}
				o, err := e.getMetadata(ctx, u)
				if err != nil {
					return err
				}
				return o.wantStr("resource", e.URL("/mcp"))
			},
		},
		probe(Check{ID: "HDR-07", Title: "the consent page forbids framing (CSP frame-ancestors 'none', X-Frame-Options DENY)", Area: "headers",
			Source: "decisions.md §Authorization endpoint (consent page)", Needs: []Need{NeedSession}},
			suiteConsent,
			func(_ *Env, r *Response) error {
				csp := strings.ToLower(r.Header.Get("Content-Security-Policy"))
				if !strings.Contains(csp, "frame-ancestors 'none'") {
					return Fail("Content-Security-Policy: want frame-ancestors 'none', got %q", r.Header.Get("Content-Security-Policy"))
				}
				if xfo := r.Header.Get("X-Frame-Options"); !strings.EqualFold(xfo, "DENY") {
					return Fail("X-Frame-Options: want DENY, got %q", xfo)
				}
				return nil
			}),
		{
			ID: "HDR-08", Title: "the test clock refuses cross-origin and form posts", Area: "headers",
			Source: "decisions.md §Test clock (a page on any site can post a form to a loopback server)", Needs: []Need{NeedClockURL},
			Run: func(ctx context.Context, e *Env) error {
				hc := e.target.Clock.(*HTTPClock) // NeedClockURL
				// advance=0s: a server that wrongly accepts still keeps its time.
				for _, try := range []struct{ what, ctype, body string }{
					{"a form post from another origin", "application/x-www-form-urlencoded", "advance=0s"},
					{"a JSON post from another origin", "application/json", `{"advance":"0s"}`},
				} {
					status, err := hc.post(ctx, try.ctype, []byte(try.body), "http://evil.example")
					if err != nil {
						return err
					}
					if status < 400 || status > 499 {
						return Fail("%s to the test clock answered %d, want a 4xx: any web page the developer opens can move the server's time", try.what, status)
					}
				}
				return nil
			},
		},
	}
}
