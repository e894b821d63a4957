package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/browserurl"
)

// authCookie returns the auth_token cookie among cs.
func authCookie(cs []*http.Cookie) *http.Cookie {
	for _, c := range cs {
		if c.Name == "auth_token" {
			return c
		}
	}
	return nil
}

// sessionAuthCookie returns the session's auth_token cookie, or fails.
func (e *Env) sessionAuthCookie(ctx context.Context) (*http.Cookie, error) {
	cs, err := e.SessionCookies(ctx)
	if err != nil {
		return nil, err
	}
	c := authCookie(cs)
	if c == nil {
		return nil, Fail("the session has no auth_token cookie")
	}
	return c, nil
}

// identityProviderRedirect starts a browser sign-in at /auth/login and
// returns where it redirects to.
func (e *Env) identityProviderRedirect(ctx context.Context) (*url.URL, error) {
	r, err := e.Get(ctx, "/auth/login?return_to=%2F", "Accept", "text/html")
	if err != nil {
		return nil, err
	}
	return location(r)
}

func loginChecks() []Check {
	return []Check{
		{
			ID: "LOGIN-01", Title: "/auth/login redirects to the identity provider with a state", Area: "login",
			Source: "contract §Browser pages; decisions.md §Browser login",
			Run: func(ctx context.Context, e *Env) error {
				u, err := e.identityProviderRedirect(ctx)
				if err != nil {
					return err
				}
				if u.Scheme != "http" && u.Scheme != "https" {
					return Fail("want a redirect to an http(s) identity provider, got %s", u)
				}
				if u.Query().Get("state") == "" {
					return Fail("the redirect to the identity provider carries no state: %s", u)
				}
				return nil
			},
		},
		{
			ID: "LOGIN-02", Title: "the identity provider request uses a nonce and PKCE S256", Area: "login",
			Source: "decisions.md §Browser login", Severity: Should,
			Run: func(ctx context.Context, e *Env) error {
				u, err := e.identityProviderRedirect(ctx)
				if err != nil {
					return err
				}
				q := u.Query()
				if q.Get("nonce") == "" || q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
					return Fail("want nonce, code_challenge and code_challenge_method=S256 in %s", u)
				}
				return nil
			},
		},
		{
			ID: "LOGIN-03", Title: "/auth/callback with an unknown state is refused and sets no cookie", Area: "login",
			Source: "decisions.md §Browser login (state); RFC 6749 §10.12",
			Run: func(ctx context.Context, e *Env) error {
				r, err := e.Get(ctx, "/auth/callback?code="+randomString(12)+"&state="+randomString(12), "Accept", "text/html")
				if err != nil {
					return err
				}
				if c := authCookie((&http.Response{Header: r.Header}).Cookies()); c != nil && c.Value != "" {
					return Fail("an auth_token cookie was set for a forged callback")
				}
				if r.Status < 400 || r.Status > 499 {
					return Fail("want a 4xx, got %s", r.Snippet())
				}
				return nil
			},
		},
		{
			ID: "LOGIN-04", Title: "the auth_token cookie is HttpOnly, Secure, SameSite=Lax, Path=/, Max-Age 86400", Area: "login",
			Source: "contract §Session cookie; decisions.md §Browser login", Needs: []Need{NeedSession},
			Run: given((*Env).sessionAuthCookie, func(ctx context.Context, e *Env, c *http.Cookie) error {
				if c.Raw == "" {
					return Skip("the cookie's attributes are unknown (the session was given, not observed at login)")
				}
				var bad []string
				if !c.HttpOnly {
					bad = append(bad, "not HttpOnly")
				}
				if !c.Secure {
					bad = append(bad, "not Secure")
				}
				if c.SameSite != http.SameSiteLaxMode {
					bad = append(bad, "SameSite is not Lax")
				}
				if c.Path != "/" {
					bad = append(bad, "Path is "+c.Path)
				}
				if c.MaxAge != 86400 {
					bad = append(bad, "Max-Age is not 86400")
				}
				if len(bad) > 0 {
					return Fail("auth_token: %s (Set-Cookie: %s)", strings.Join(bad, ", "), redactCookie(c))
				}
				return nil
			}),
		},
		{
			ID: "LOGIN-05", Title: "the session cookie holds a JWT that works as a bearer token", Area: "login",
			Source: "contract §Session cookie; §Authentication 2", Needs: []Need{NeedSession},
			Run: given((*Env).sessionAuthCookie, func(ctx context.Context, e *Env, c *http.Cookie) error {
				if _, _, err := decodeJWT(c.Value); err != nil {
					return Fail("auth_token: %v", err)
				}
				_, err := e.pingAs(ctx, c.Value)
				return err
			}),
		},
		returnToCheck(),
		{
			ID: "LOGIN-07", Title: "an OAuth access token in the auth_token cookie opens no page", Area: "login",
			Source: "contract §Authentication 2 (the cookie JWT is for browser sessions only)", Needs: []Need{NeedApproval},
			Run: given((*Env).token, func(ctx context.Context, e *Env, tok string) error {
				for _, path := range []string{"/settings", "/auth/device"} {
					r, err := e.Get(ctx, path, "Accept", "text/html", "Cookie", "auth_token="+tok)
					if err != nil {
						return err
					}
					if r.Status == http.StatusOK {
						return Fail("GET %s with an access token as the session cookie answered 200: any client the user approved (or a thief of its token) reads the API key and gets the page's CSRF token", path)
					}
				}
				return nil
			}),
		},
	}
}

// redactCookie shows a Set-Cookie line without its secret value.
func redactCookie(c *http.Cookie) string {
	return strings.Replace(c.Raw, c.Value, "…", 1)
}

// hostileReturnTo are return_to values that browsers turn into another
// origin while naive checks see a path (tabs and newlines are dropped, "\"
// reads as "/"), as they arrive after the query's own decoding.
var hostileReturnTo = []string{
	"/\t/evil.example/x",
	"///evil.example",
	"/\\evil.example",
	"/%5Cevil.example",
	"/\r\n//evil.example",
	"/.//evil.example",
	"/\t\t/evil.example",
	"http:evil.example",
	"/\t\\\\evil.example",
	"/\u2215evil.example",
	"//evil.example",
	"https://evil.example/",
}

func returnToCheck() Check {
	return Check{
		ID: "LOGIN-06", Title: "sign-in never redirects off the service, whatever return_to says", Area: "login",
		Source: "RFC 9700 §4.11 (open redirection); WHATWG URL parsing", Needs: []Need{NeedApproval},
		Run: func(ctx context.Context, e *Env) error {
			f, ok := e.target.Approver.(SignInFollower)
			if !ok {
				return Skip("the approver cannot sign in afresh (use --approve=form)")
			}
			var bad []string
			for _, v := range hostileReturnTo {
				loc, base, err := f.SignInFrom(ctx, "/auth/login?return_to="+url.QueryEscape(v))
				if err != nil {
					return err
				}
				if to := browserurl.Resolve(base, loc); !browserurl.SameOrigin(base, to) {
					bad = append(bad, fmt.Sprintf("return_to %q → Location %q → %v", v, loc, to))
				}
			}
			if len(bad) > 0 {
				return Fail("after sign-in a browser leaves the service: %s", strings.Join(bad, "; "))
			}
			return nil
		},
	}
}
