package flows

import (
	"slices"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// ScopeOfflineAccess asks for a refresh token (OpenID Connect Core §11, as
// the MCP authorization specification uses it).
const ScopeOfflineAccess = "offline_access"

// applicationTypeNative is the RFC 7591 / OpenID Connect Dynamic Client
// Registration application_type of a CLI: loopback redirect URIs.
const applicationTypeNative = "native"

// WithOfflineAccess returns scope with offline_access added when, and only
// when, the authorization server lists it in scopes_supported. A server that
// does not list it may reject an unknown scope, and one that lists it may
// issue refresh tokens only when it is asked for.
func WithOfflineAccess(scope string, md *AuthServerMetadata) string {
	if md == nil || !slices.Contains(md.ScopesSupported, ScopeOfflineAccess) {
		return scope
	}
	return oauthwire.UnionScopes(scope, ScopeOfflineAccess)
}
