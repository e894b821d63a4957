package flows

import (
	"slices"
	"strings"
)

// ScopeOfflineAccess asks for a refresh token (OpenID Connect Core §11, as
// the MCP authorization specification uses it).
const ScopeOfflineAccess = "offline_access"

// ApplicationTypeNative is the RFC 7591 / OpenID Connect Dynamic Client
// Registration application_type of a CLI: loopback redirect URIs.
const ApplicationTypeNative = "native"

// GrantTypeRefreshToken is the RFC 6749 §6 grant type.
const GrantTypeRefreshToken = "refresh_token"

// WithOfflineAccess returns scope with offline_access added when, and only
// when, the authorization server lists it in scopes_supported. A server that
// does not list it may reject an unknown scope, and one that lists it may
// issue refresh tokens only when it is asked for.
func WithOfflineAccess(scope string, md *AuthServerMetadata) string {
	if md == nil || !slices.Contains(md.ScopesSupported, ScopeOfflineAccess) {
		return scope
	}
	return UnionScopes(scope, ScopeOfflineAccess)
}

// MachineScope is the scope a machine grant (client credentials, JWT
// bearer) asks for when none was given: the discovered scope without
// offline_access, since such grants get no refresh token (RFC 6749
// §4.4.3), and an authorization server may refuse the scope for them.
func MachineScope(discovered string) string {
	var kept []string
	for _, tok := range strings.Fields(discovered) {
		if tok != ScopeOfflineAccess {
			kept = append(kept, tok)
		}
	}
	return strings.Join(kept, " ")
}

// UnionScopes returns the space-separated union of the scope strings, in
// first-seen order, without duplicates or empty tokens.
func UnionScopes(scopes ...string) string {
	var out []string
	seen := map[string]bool{} // a server's scope may have thousands of tokens
	for _, s := range scopes {
		for _, tok := range strings.Fields(s) {
			if !seen[tok] {
				seen[tok] = true
				out = append(out, tok)
			}
		}
	}
	return strings.Join(out, " ")
}

// ScopeCovers reports whether granted contains every token of want.
func ScopeCovers(granted, want string) bool {
	have := strings.Fields(granted)
	for _, tok := range strings.Fields(want) {
		if !slices.Contains(have, tok) {
			return false
		}
	}
	return true
}
