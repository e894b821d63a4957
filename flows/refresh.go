package flows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// DefaultRefreshMargin is how long before its expiry an access token counts
// as expiring: a token with less left may die in flight.
const DefaultRefreshMargin = 60 * time.Second

// minRefreshMargin is the floor of RefreshMargin: clock skew between client
// and server, and one request's flight.
const minRefreshMargin = 5 * time.Second

// RefreshMargin is the early-refresh margin for a token that lives
// lifetime: a quarter of it, between 5 s (skew) and DefaultRefreshMargin.
// A fixed 60 s margin would refresh a 60 s token on every use; x/oauth2
// uses a fixed 10 s. An unknown lifetime (0) gets the default.
func RefreshMargin(lifetime time.Duration) time.Duration {
	if lifetime <= 0 {
		return DefaultRefreshMargin
	}
	return min(max(lifetime/4, minRefreshMargin), DefaultRefreshMargin)
}

// ErrRefreshRefused: the authorization server will not redeem the refresh
// token any more (invalid_grant: expired, revoked, already used; or
// invalid_target: not valid for the resource). Only a new login helps.
var ErrRefreshRefused = errors.New("refresh token refused")

// RefreshConfig configures Refresh.
type RefreshConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock
	// TokenURL is the authorization server's token_endpoint.
	TokenURL string
	// Client must be the client the refresh token was issued to.
	Client Client
	// Resource is sent as the RFC 8707 resource, as the MCP authorization
	// specification asks for every token request; "" omits it.
	Resource string
	// Scope, when set, narrows the refreshed grant (RFC 6749 §6).
	Scope string
	// Issuer is the authorization server's issuer (for client assertions).
	Issuer string
	// DPoP is the key a DPoP-bound refresh token was issued with: a public
	// client's refresh token is bound to it (RFC 9449 §5), so the refresh
	// carries a proof from the same key, and the new tokens stay bound.
	DPoP *DPoP
}

// Refresh redeems refreshToken at the token endpoint (RFC 6749 §6). When the
// server rotates it, the new refresh token is in the result; when it does
// not, the result carries refreshToken again, so the caller can always store
// the result as the new pair. invalid_grant and invalid_target match
// ErrRefreshRefused.
func Refresh(ctx context.Context, cfg RefreshConfig, refreshToken string) (*Token, error) {
	if cfg.TokenURL == "" {
		return nil, errors.New("refresh: no token endpoint")
	}
	if refreshToken == "" {
		return nil, errors.New("refresh: no refresh token")
	}
	form := url.Values{"grant_type": {oauthwire.GrantTypeRefreshToken}, "refresh_token": {refreshToken}, "resource": {cfg.Resource}}
	if cfg.Scope != "" {
		form.Set("scope", cfg.Scope)
	}
	tok, _, err := TokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: cfg.TokenURL, Issuer: cfg.Issuer,
		Client: cfg.Client, DPoP: cfg.DPoP}.Do(ctx, form)
	if err != nil {
		var oe *OAuthError
		if errors.As(err, &oe) && (oe.Code == "invalid_grant" || oe.Code == "invalid_target") {
			return nil, fmt.Errorf("refresh at %s: %w: %w", cfg.TokenURL, ErrRefreshRefused, err)
		}
		return nil, fmt.Errorf("refresh at %s: %w", cfg.TokenURL, err)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = refreshToken // not rotated (RFC 6749 §6: the client keeps the old one)
	}
	return tok, nil
}

// NeedsRefresh reports whether an access token expiring at expiry should be
// refreshed at now: it has expired or expires within margin. A zero expiry
// never needs it.
func NeedsRefresh(expiry, now time.Time, margin time.Duration) bool {
	return !expiry.IsZero() && !now.Add(margin).Before(expiry)
}
