package flows

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// GrantTypeJWTBearer is the RFC 7523 §2.1 grant type: a JWT issued by a
// party the authorization server trusts (a workload identity provider such
// as GitHub Actions OIDC, or an enterprise IdP's ID-JAG) stands for the
// authorization grant.
const GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

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
	return cfg.run(ctx, "JWT bearer grant", url.Values{"grant_type": {GrantTypeJWTBearer}, "assertion": {assertion}})
}
