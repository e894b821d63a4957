package server

import (
	"net/http"
	"strings"
)

// scopeOfflineAccess asks for a refresh token (OpenID Connect Core §11, as
// MCP uses it). It is an authorization server scope only: the protected
// resource's metadata keeps listing mcp alone (SEP-2207).
const scopeOfflineAccess = "offline_access"

// maxScopeLen bounds a scope parameter; the longest valid one is far shorter.
const maxScopeLen = 200

// normalizeScope parses a scope parameter (RFC 6749 §3.3) at the
// authorization, device and registration endpoints. Omitted means mcp
// (decisions.md); the known scopes are mcp and offline_access, in any order,
// repeated or not. mcp is implied: every token is for the MCP resource, so
// "offline_access" alone grants "mcp offline_access". The result is
// canonical, so it can be compared and stored as is.
func normalizeScope(scope string) (string, *oauthError) {
	if scope == "" {
		return scopeMCP, nil
	}
	set, oerr := parseScopeSet(scope)
	if oerr != nil {
		return "", oerr
	}
	return canonicalScope(set), nil
}

// parseScopeSet splits scope on spaces and refuses unknown or empty tokens.
func parseScopeSet(scope string) (map[string]bool, *oauthError) {
	if len(scope) > maxScopeLen {
		return nil, newError(http.StatusBadRequest, errInvalidScope, "scope is too long")
	}
	set := map[string]bool{scopeMCP: true}
	for tok := range strings.SplitSeq(scope, " ") {
		switch tok {
		case scopeMCP, scopeOfflineAccess:
			set[tok] = true
		default:
			return nil, newError(http.StatusBadRequest, errInvalidScope, "supported scopes: mcp, offline_access")
		}
	}
	return set, nil
}

func canonicalScope(set map[string]bool) string {
	if set[scopeOfflineAccess] {
		return scopeMCP + " " + scopeOfflineAccess
	}
	return scopeMCP
}

// hasScope reports whether the canonical scope string includes tok.
func hasScope(scope, tok string) bool {
	for s := range strings.SplitSeq(scope, " ") {
		if s == tok {
			return true
		}
	}
	return false
}
