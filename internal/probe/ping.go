package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// PingResult is the body of a successful GET /api/ping.
type PingResult struct {
	Status string `json:"status"`
	UserID string `json:"user_id"`
	// Name is an extension some servers add (the reference server does):
	// the user's display name.
	Name string `json:"name,omitempty"`
}

// Ping checks token with GET {baseURL}/api/ping, sent as a Bearer token;
// token is "" when hc carries the credential (flows.Transport.Client).
func Ping(ctx context.Context, hc *http.Client, baseURL, token string) (*PingResult, error) {
	u := strings.TrimRight(baseURL, "/") + "/api/ping"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("ping: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		hc, err = bearerClient(hc, u, token)
		if err != nil {
			return nil, fmt.Errorf("ping: %w", err)
		}
	}
	confined, err := flows.ConfineTo(hc, u)
	if err != nil {
		return nil, fmt.Errorf("ping %s: %w", u, err)
	}
	resp, body, err := oauthwire.Do(confined, req)
	if err != nil {
		return nil, fmt.Errorf("ping %s: %w", u, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("ping %s: %w", u, flows.NewResourceError(resp))
	default:
		return nil, fmt.Errorf("ping %s: %w", u, responseError(resp, body))
	}
	var r PingResult
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("ping %s: response is not JSON: %w", u, err)
	}
	return &r, nil
}

// bearerClient is hc presenting token as a Bearer token at rawURL's
// origin. A transport hc already has (a DPoP-bound one) sets its own
// header over it.
func bearerClient(hc *http.Client, rawURL, token string) (*http.Client, error) {
	o, err := flows.OriginOf(rawURL)
	if err != nil {
		return nil, err
	}
	return (&flows.Transport{Origin: o, Source: flows.StaticSource(flows.Credential{Token: token})}).Client(hc), nil
}

// responseError is the answer's *flows.OAuthError, or one with its status
// and an excerpt when the body names no error.
func responseError(resp *http.Response, body []byte) *flows.OAuthError {
	if e := flows.ParseOAuthError(resp, body); e != nil {
		return e
	}
	return &flows.OAuthError{StatusCode: resp.StatusCode, Description: oauthwire.Excerpt(body)}
}
