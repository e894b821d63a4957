package flows

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// Revoke asks the authorization server to revoke token at its RFC 7009
// revocation endpoint, authenticating as client. hint is "refresh_token",
// "access_token" or "". A 200 means revoked or already invalid (RFC 7009
// §2.2); anything else is an error, *OAuthError when the server says why.
func Revoke(ctx context.Context, hc *http.Client, endpoint string, client Client, token, hint string) error {
	form := url.Values{"token": {token}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	resp, body, err := TokenRequest{HTTPClient: hc, Endpoint: endpoint, Client: client}.post(ctx, form)
	if err != nil {
		return fmt.Errorf("revoke at %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoke at %s: %w", endpoint, responseError(resp, body))
	}
	return nil
}
