package flows

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// JWTBearer trades assertion for a token (RFC 7523 §2.1), the client
// authenticating as cfg.Client says (often none: the assertion names it).
// The assertion is sent as given; its issuer signed it, not us.
func JWTBearer(ctx context.Context, cfg GrantConfig, assertion string) (*Token, error) {
	assertion = strings.TrimSpace(assertion)
	if assertion == "" {
		return nil, errors.New("JWT bearer grant: the assertion is empty")
	}
	if strings.Count(assertion, ".") != 2 {
		return nil, errors.New("JWT bearer grant: the assertion is not a JWT (want three dot-separated parts)")
	}
	return cfg.run(ctx, "JWT bearer grant", url.Values{"grant_type": {oauthwire.GrantTypeJWTBearer}, "assertion": {assertion}})
}
