package flows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// preflight asks the authorization endpoint about req before a browser
// does. Two callers want it:
//
// A client the server may have forgotten (a cached registration, when
// Reregister can replace it; one registered moments ago in this run is
// known, and a server counts every authorization request it sees). A server
// that no longer knows the client cannot redirect back (the redirect URI is
// unverified), so it answers the browser with an error and the CLI would
// wait its whole timeout; answered here, invalid_client starts the
// re-registration at once. Only a direct JSON or form invalid_client
// counts.
//
// cfg.Preflight: a request the endpoint may refuse (refusal). Anything
// else (a login page, a redirect elsewhere, a 5xx, no answer) leaves the
// flow as it was: the browser will see the same and the user can tell.
func (cfg AuthCodeConfig) preflight(ctx context.Context, req *AuthRequest) error {
	forgotten := cfg.Reregister != nil && cfg.Client.Source == SourceCache
	if !forgotten && !cfg.Preflight {
		return nil
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL(), nil)
	if err != nil {
		return nil
	}
	hreq.Header.Set("Accept", "application/json")
	hc := *httpClient(cfg.HTTPClient)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, body, err := oauthwire.Do(&hc, hreq)
	if resp == nil {
		return nil
	}
	if oe := ParseOAuthError(resp, body); forgotten && err == nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && oe != nil && oe.Code == "invalid_client" {
		return fmt.Errorf("authorization endpoint: %w", oe)
	}
	if cfg.Preflight {
		return cfg.refusal(req, resp, body)
	}
	return nil
}

// refusal reads a preflight's answer as a browser would end up showing it:
// a redirect back to the CLI with an error (RFC 6749 §4.1.2.1), or a 4xx
// page (414 URI Too Long, 400 for a scope the server rejects outright).
// 401, 403, 407 and 429 depend on who asks (a signed-in browser, a proxy,
// a rate limit) and are left to the browser.
func (cfg AuthCodeConfig) refusal(req *AuthRequest, resp *http.Response, body []byte) error {
	status := resp.StatusCode
	switch {
	case status >= 300 && status < 400:
		loc, err := resp.Location()
		if err != nil || !sameEndpoint(loc, req.RedirectURI) {
			return nil
		}
		var oe *OAuthError
		if _, err := checkCallback(loc.Query(), cfg.callbackCheck(req)); errors.As(err, &oe) {
			return fmt.Errorf("%w: it redirected back with %w", ErrAuthorizationRefused, oe)
		}
	case status == http.StatusRequestURITooLong:
		return fmt.Errorf("%w: HTTP 414 URI Too Long for an authorization URL of %d characters", ErrAuthorizationRefused, len(req.URL()))
	case status >= 400 && status < 500 && status != http.StatusUnauthorized && status != http.StatusForbidden &&
		status != http.StatusProxyAuthRequired && status != http.StatusTooManyRequests:
		if oe := ParseOAuthError(resp, body); oe != nil && oe.Code != "" {
			return fmt.Errorf("%w: %w", ErrAuthorizationRefused, oe)
		}
		return fmt.Errorf("%w: HTTP %d", ErrAuthorizationRefused, status)
	}
	return nil
}

// sameEndpoint reports whether u points at endpoint, ignoring the query.
func sameEndpoint(u *url.URL, endpoint string) bool {
	e, err := url.Parse(endpoint)
	return err == nil && u.Scheme == e.Scheme && u.Host == e.Host && u.Path == e.Path
}
