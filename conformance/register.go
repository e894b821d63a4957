package conformance

import (
	"context"
	"slices"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
)

// validClient is registration metadata the contract accepts.
func validClient() map[string]any {
	return map[string]any{
		"client_name":    "conformance " + randomString(4),
		"redirect_uris":  []string{loopbackRedirect},
		"grant_types":    []string{"authorization_code"},
		"response_types": []string{"code"},
		"scope":          "mcp",
	}
}

// with returns m with key set to v (or removed when v is nil).
func with(m map[string]any, key string, v any) map[string]any {
	if v == nil {
		delete(m, key)
	} else {
		m[key] = v
	}
	return m
}

// registered registers meta and returns the response object, requiring 201.
func (e *Env) registered(ctx context.Context, meta map[string]any) (object, error) {
	r, err := e.register(ctx, meta)
	if err != nil {
		return nil, err
	}
	if r.Status != 201 {
		return nil, Fail("want HTTP 201 Created, got %s", r.Snippet())
	}
	return decodeObject(r)
}

// rejectMeta is a check that registering meta fails with one of codes.
func rejectMeta(id, title, source string, meta func() map[string]any, codes ...string) Check {
	return probe(Check{ID: id, Title: title, Area: "register", Source: source},
		fresh(func() sender { return postJSON("/oauth/register", meta()) }), oauthErr(400, codes...))
}

// acceptMeta is a check that registering meta succeeds with 201.
func acceptMeta(id, title, source string, meta func() map[string]any) Check {
	return Check{
		ID: id, Title: title, Area: "register", Source: source,
		Run: func(ctx context.Context, e *Env) error {
			o, err := e.registered(ctx, meta())
			if err != nil {
				return err
			}
			_, err = o.filled("client_id")
			return err
		},
	}
}

func redirectMeta(uris ...string) func() map[string]any {
	return func() map[string]any { return with(validClient(), "redirect_uris", uris) }
}

func registerChecks() []Check {
	const rfc = "RFC 7591 via decisions.md §Registration"
	return []Check{
		acceptMeta("REG-01", "registration returns 201 with a client_id", "contract §POST /oauth/register; RFC 7591 §3.2.1", validClient),
		{
			ID: "REG-02", Title: "registration echoes client_name and redirect_uris", Area: "register",
			Source: "contract §POST /oauth/register",
			Run: func(ctx context.Context, e *Env) error {
				meta := validClient()
				o, err := e.registered(ctx, meta)
				if err != nil {
					return err
				}
				if err := o.wantStr("client_name", meta["client_name"].(string)); err != nil {
					return err
				}
				return o.wantSet("redirect_uris", loopbackRedirect)
			},
		},
		{
			ID: "REG-03", Title: "registration returns a public client (token_endpoint_auth_method none) with grant and response types",
			Area: "register", Source: rfc,
			Run: func(ctx context.Context, e *Env) error {
				o, err := e.registered(ctx, with(with(validClient(), "grant_types", nil), "response_types", nil))
				if err != nil {
					return err
				}
				if err := o.wantStr("token_endpoint_auth_method", "none"); err != nil {
					return err
				}
				if err := o.wantSet("grant_types", "authorization_code"); err != nil {
					return Fail("grant_types should default to [authorization_code]: %v", err)
				}
				rt, err := o.strs("response_types")
				if err != nil {
					return err
				}
				if !slices.Contains(rt, "code") {
					return Fail("response_types: want it to contain code, got %q", rt)
				}
				if _, err := o.integer("client_id_issued_at"); err != nil {
					return err
				}
				return nil
			},
		},
		rejectMeta("REG-04", "registration without redirect_uris is rejected", rfc,
			func() map[string]any { return with(validClient(), "redirect_uris", nil) },
			"invalid_redirect_uri", "invalid_client_metadata"),
		rejectMeta("REG-05", "registration with an empty redirect_uris is rejected", rfc,
			redirectMeta(), "invalid_redirect_uri", "invalid_client_metadata"),
		rejectMeta("REG-06", "an http redirect URI on a non-loopback host is rejected", rfc+"; RFC 8252 §8.3",
			redirectMeta("http://client.example.com/callback"), "invalid_redirect_uri"),
		rejectMeta("REG-07", "a redirect URI with a fragment is rejected", rfc+"; RFC 6749 §3.1.2",
			redirectMeta("https://client.example.com/callback#frag"), "invalid_redirect_uri"),
		rejectMeta("REG-08", "a relative redirect URI is rejected", rfc+"; RFC 6749 §3.1.2",
			redirectMeta("/callback"), "invalid_redirect_uri"),
		probe(Check{ID: "REG-09", Title: "malformed JSON gets 400 with an RFC 6749-shaped error", Area: "register",
			Source: "contract §Errors; RFC 7591 §3.2.2"},
			postRaw("/oauth/register", "application/json", `{"redirect_uris": [`),
			oauthErr(400, "invalid_client_metadata", "invalid_request")),
		probe(Check{ID: "REG-10", Title: "a body that is not application/json is rejected with 400", Area: "register",
			Source: "contract §Endpoints (content type per endpoint)"},
			postRaw("/oauth/register", "text/plain", `{"redirect_uris":["`+loopbackRedirect+`"]}`),
			oauthErr(400, "invalid_client_metadata", "invalid_request")),
		probe(Check{ID: "REG-11", Title: "a body over 1 MiB is refused with a 4xx, not a 5xx", Area: "register",
			Source: "decisions.md (every request body bounded)"},
			fresh(func() sender {
				return postRaw("/oauth/register", "application/json",
					`{"client_name":"`+strings.Repeat("A", 1<<20+1024)+`","redirect_uris":["`+loopbackRedirect+`"]}`)
			}),
			clientError("a 4xx (413 or 400)")),
		acceptMeta("REG-12", "a device-only client may register without redirect_uris", rfc,
			func() map[string]any {
				m := with(with(validClient(), "redirect_uris", nil), "response_types", nil)
				return with(m, "grant_types", []string{flows.GrantTypeDeviceCode})
			}),
		acceptMeta("REG-13", "http redirect URIs on loopback hosts (127.0.0.1, [::1], localhost) are accepted", rfc+"; RFC 8252 §7.3",
			redirectMeta("http://127.0.0.1:8976/callback", "http://[::1]:8976/callback", "http://localhost:8976/callback")),
		acceptMeta("REG-14", "a private-use scheme redirect URI is accepted", rfc+"; RFC 8252 §7.1",
			redirectMeta("com.example.mcpclient:/callback")),
		acceptMeta("REG-15", "client_name and scope may be omitted", "decisions.md §Registration",
			func() map[string]any { return with(with(validClient(), "client_name", nil), "scope", nil) }),
		rejectMeta("REG-16", "a client_name that is not a string is rejected", rfc,
			func() map[string]any { return with(validClient(), "client_name", 42) }, "invalid_client_metadata"),
		rejectMeta("REG-17", "an unknown grant type is rejected", rfc,
			func() map[string]any { return with(validClient(), "grant_types", []string{"password"}) }, "invalid_client_metadata"),
		rejectMeta("REG-18", "a scope other than mcp is rejected", rfc,
			func() map[string]any { return with(validClient(), "scope", "admin") }, "invalid_client_metadata"),
		{
			ID: "REG-19", Title: "application_type is echoed: native for loopback redirect URIs, web for https", Area: "register",
			Source: "RFC 7591 §2; OpenID Connect Registration §2 via " + src2026 + " (Registration)",
			Run: func(ctx context.Context, e *Env) error {
				for _, tc := range []struct{ typ, uri string }{{"native", loopbackRedirect}, {"web", httpsRedirect}} {
					o, err := e.registered(ctx, with(redirectMeta(tc.uri)(), "application_type", tc.typ))
					if err != nil {
						return Fail("application_type %s: %v", tc.typ, err)
					}
					if err := o.wantStr("application_type", tc.typ); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "REG-20", Title: "application_type defaults to native for loopback and private-use redirect URIs, web otherwise", Area: "register",
			Source: src2026 + " (Registration)",
			Run: func(ctx context.Context, e *Env) error {
				for _, tc := range []struct {
					want string
					uris []string
				}{
					{"native", []string{loopbackRedirect, "com.example.mcpclient:/callback"}},
					{"web", []string{httpsRedirect}},
					{"web", []string{loopbackRedirect, httpsRedirect}},
				} {
					o, err := e.registered(ctx, redirectMeta(tc.uris...)())
					if err != nil {
						return err
					}
					if err := o.wantStr("application_type", tc.want); err != nil {
						return Fail("redirect URIs %q: %v", tc.uris, err)
					}
				}
				return nil
			},
		},
		rejectMeta("REG-21", "a web client with an http (loopback) redirect URI is rejected", src2026+" (Registration)",
			func() map[string]any { return with(validClient(), "application_type", "web") }, "invalid_redirect_uri"),
		rejectMeta("REG-22", "an application_type other than native or web is rejected", src2026+" (Registration)",
			func() map[string]any { return with(validClient(), "application_type", "desktop") }, "invalid_client_metadata"),
		rejectMeta("REG-23", "grant_types with refresh_token alone is rejected", src2026+" (Registration)",
			func() map[string]any { return with(validClient(), "grant_types", []string{"refresh_token"}) }, "invalid_client_metadata"),
	}
}
