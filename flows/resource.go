package flows

import (
	"net/url"
	"strings"
)

// ResourceCovers reports whether resource, a protected resource identifier,
// covers the MCP URL mcpURL: it is the same URL, or its origin, or a path
// prefix of it ending at a segment boundary (RFC 9728 §3.3 as the MCP
// authorization specification applies it to a document found at the root
// well-known location). Both are compared canonically.
func ResourceCovers(resource, mcpURL string) bool {
	r, err1 := CanonicalResource(resource)
	m, err2 := CanonicalResource(mcpURL)
	if err1 != nil || err2 != nil {
		return false
	}
	if r == m {
		return true
	}
	ru, err1 := url.Parse(r)
	mu, err2 := url.Parse(m)
	if err1 != nil || err2 != nil || ru.Scheme != mu.Scheme || ru.Host != mu.Host || ru.RawQuery != "" {
		return false
	}
	prefix := strings.TrimSuffix(ru.EscapedPath(), "/")
	return prefix == "" || strings.HasPrefix(mu.EscapedPath(), prefix+"/")
}

// defaultEndpoints is the authorization server an MCP 2025-03-26 server
// without any metadata implies: /authorize, /token and /register at the
// origin of the MCP URL (2025-03-26 "Fallbacks for Servers without Metadata
// Discovery"). PKCE is mandatory in that revision, hence S256.
func defaultEndpoints(base string) *AuthServerMetadata {
	return &AuthServerMetadata{
		Issuer:                        base,
		AuthorizationEndpoint:         base + "/authorize",
		TokenEndpoint:                 base + "/token",
		RegistrationEndpoint:          base + "/register",
		CodeChallengeMethodsSupported: []string{"S256"},
		ResponseTypesSupported:        []string{"code"},
	}
}
