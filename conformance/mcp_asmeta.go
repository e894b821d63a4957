package conformance

import (
	"context"
	"net/http"
	"slices"
)

// The mcp profile's authorization server metadata checks (RFC 8414, OpenID
// Connect Discovery), on the document discovery found.

func mcpASChecks() []Check {
	return []Check{
		mcpCheck("MCP-04", areaASMetadata, "authorization server metadata is found at a discovery location with an issuer equal to the one the resource names",
			srcASDiscov+"; RFC 8414 §3.1 and §3.3; OpenID Connect Discovery §4.3", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if err := s.as.wantStr("issuer", s.issuer); err != nil {
					return Fail("metadata at %s: %v (compared as exact strings)", s.asURL, err)
				}
				for _, k := range []string{"authorization_endpoint", "token_endpoint"} {
					if _, err := s.as.str(k); err != nil {
						return err
					}
				}
				return nil
			}),
		mcpCheck("MCP-05", areaASMetadata, "the authorization server advertises PKCE S256 (MCP clients refuse it otherwise)",
			srcMCPAuth+" §Authorization code protection; RFC 8414 §2", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if !s.offers("code_challenge_methods_supported", "S256") {
					return Fail("code_challenge_methods_supported: want it to contain S256, got %s", s.as["code_challenge_methods_supported"])
				}
				return nil
			}),
		mcpCheck("MCP-27", areaASMetadata, "authorization server metadata is served as application/json",
			"RFC 8414 §3.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				return e.wantJSONAt(ctx, s.asURL)
			}),
		mcpCheck("MCP-28", areaASMetadata, "response_types_supported is present and contains code",
			"RFC 8414 §2 (REQUIRED); "+srcMCPAuth+" (OAuth 2.1 authorization code)", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				rt, err := s.as.strs("response_types_supported")
				if err != nil {
					return err
				}
				if !slices.Contains(rt, "code") {
					return Fail("response_types_supported: want code among %q", rt)
				}
				return nil
			}),
		mcpCheck("MCP-29", areaASMetadata, "every advertised endpoint is an absolute https URL",
			"RFC 8414 §2; "+srcMCPAuth+" §Communication security (HTTPS)", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				for _, k := range []string{"authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint", "jwks_uri", "introspection_endpoint"} {
					if !s.as.has(k) {
						continue
					}
					v, err := s.as.str(k)
					if err != nil {
						return err
					}
					if err := wantIdentifierURL(k, v, false); err != nil {
						return err
					}
				}
				return nil
			}),
		mcpCheck("MCP-30", areaASMetadata, "code_challenge_methods_supported does not offer plain",
			"OAuth 2.1 §4.1.1 (S256 MUST be used when the client can); RFC 9700 §2.1.1", Should, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if s.offers("code_challenge_methods_supported", "plain") {
					return Fail("code_challenge_methods_supported offers plain: %s", s.as["code_challenge_methods_supported"])
				}
				return nil
			}),
		mcpCheck("MCP-31", areaASMetadata, "grant_types_supported, when present, contains authorization_code",
			"RFC 8414 §2; "+srcMCPAuth, Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if !s.as.has("grant_types_supported") {
					return nil // the default includes authorization_code
				}
				if !s.offers("grant_types_supported", "authorization_code") {
					return Fail("grant_types_supported: want authorization_code, got %s", s.as["grant_types_supported"])
				}
				return nil
			}),
		mcpCheck("MCP-32", areaASMetadata, "neither the implicit nor the password grant is offered",
			"OAuth 2.1 §10.1 and §10.2 (removed); RFC 9700 §2.1.2 and §2.4", Should, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				for _, g := range []string{"implicit", "password"} {
					if s.offers("grant_types_supported", g) {
						return Fail("grant_types_supported offers %s: %s", g, s.as["grant_types_supported"])
					}
				}
				if s.offers("response_types_supported", "token") {
					return Fail("response_types_supported offers token (implicit)")
				}
				return nil
			}),
		mcpCheck("MCP-33", areaASMetadata, "every discovery location that answers (RFC 8414 and OpenID) shows the same issuer",
			"RFC 8414 §3.3; OpenID Connect Discovery §4.3; "+srcASDiscov, Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				for _, u := range asURLs(s.issuer) {
					r, err := e.Get(ctx, u, "Accept", "application/json")
					if err != nil || r.Status != http.StatusOK {
						continue
					}
					o, err := decodeObject(r)
					if err != nil {
						continue // not metadata: some other page
					}
					if err := o.wantStr("issuer", s.issuer); err != nil {
						return Fail("metadata at %s: %v", u, err)
					}
				}
				return nil
			}),
		mcpCheck("MCP-34", areaASMetadata, "clients have a way to register: a registration_endpoint or client ID metadata documents",
			srcMCPAuth+" §Client registration approaches", Should, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if s.meta.RegistrationEndpoint == "" && !s.flag("client_id_metadata_document_supported") {
					return Fail("neither registration_endpoint nor client_id_metadata_document_supported: only pre-registered clients can connect")
				}
				return nil
			}),
		mcpCheck("MCP-35", areaASMetadata, "authorization_response_iss_parameter_supported is advertised, so clients can tell mix-up attacks",
			srcMCPAuth+" (SEP-2468); RFC 9207 §3", Should, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if !s.flag("authorization_response_iss_parameter_supported") {
					return Fail("authorization_response_iss_parameter_supported is not true")
				}
				return nil
			}),
		mcpCheck("MCP-36", areaASMetadata, "the issuer is an https URL without query or fragment",
			"RFC 8414 §2 (issuer)", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				return wantIdentifierURL("issuer", s.issuer, true)
			}),
	}
}
