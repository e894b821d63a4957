package creds

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpauth/mcpauth/flows"
)

// ErrNotRevocable: the stored credential cannot be revoked from here (an
// API key, or an authorization server without a revocation endpoint). It
// stays valid at the server after it is deleted or replaced here.
var ErrNotRevocable = errors.New("cannot be revoked from here")

// Revoke revokes b's refresh token, else its access token, at the
// revocation endpoint recorded with it (RFC 7009), as the client it was
// issued to; the request stays on that endpoint's origin. It returns which
// token it revoked ("refresh token" or "access token").
func Revoke(ctx context.Context, hc *http.Client, b Bundle) (string, error) {
	if b.Kind == KindAPIKey || b.RevocationEndpoint == "" || b.Client == nil {
		return "", ErrNotRevocable
	}
	token, hint := b.RefreshToken, "refresh_token"
	if token == "" {
		token, hint = b.AccessToken, "access_token"
	}
	if err := flows.Revoke(ctx, hc, b.RevocationEndpoint, b.Client.flowsClient(), token, hint); err != nil {
		return "", err
	}
	if hint == "refresh_token" {
		return "refresh token", nil
	}
	return "access token", nil
}
