package server

import (
	"net/http"

	"github.com/mcpauth/mcpauth/pkce"
)

const scopeMCP = "mcp"

// RFC 9728 §2, with the values service.md lists.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	// DPoPAlgs says the resource takes DPoP-bound tokens (RFC 9449 §7.1
	// via RFC 9728 §2), with Config.DPoP.
	DPoPAlgs []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// RFC 8414 §2, with the values service.md lists.
type authServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgs      []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	DPoPAlgs                          []string `json:"dpop_signing_alg_values_supported,omitempty"` // RFC 9449 §5.1
}

func (s *Server) handleProtectedResourceMetadata(w http.ResponseWriter, r *http.Request) {
	publicMetadataHeaders(w)
	writeMetadata(w, protectedResourceMetadata{
		Resource:               s.resource,
		AuthorizationServers:   []string{s.baseURL},
		ScopesSupported:        []string{scopeMCP},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcpauth reference server",
		DPoPAlgs:               s.dpopAlgs(),
	})
}

func (s *Server) handleAuthServerMetadata(w http.ResponseWriter, r *http.Request) {
	publicMetadataHeaders(w)
	authMethods, signingAlgs := []string{"none"}, []string(nil)
	if len(s.machines) > 0 {
		authMethods = append(authMethods, machineAuthMethods...)
		signingAlgs = assertionSigningAlgs
	}
	writeMetadata(w, authServerMetadata{
		Issuer:                            s.baseURL,
		AuthorizationEndpoint:             s.baseURL + "/oauth/authorize",
		TokenEndpoint:                     s.baseURL + "/oauth/token",
		RegistrationEndpoint:              s.baseURL + "/oauth/register",
		DeviceAuthorizationEndpoint:       s.baseURL + "/api/oauth/device/code",
		ResponseTypesSupported:            s.grants.responseTypesFor(s.grants.names()),
		GrantTypesSupported:               s.grants.names(),
		CodeChallengeMethodsSupported:     []string{pkce.MethodS256},
		ScopesSupported:                   []string{scopeMCP, scopeOfflineAccess},
		TokenEndpointAuthMethodsSupported: authMethods,
		TokenEndpointAuthSigningAlgs:      signingAlgs,
		ResponseModesSupported:            []string{"query"},
		AuthorizationResponseISSSupported: true,
		ClientIDMetadataDocumentSupported: true,
		RevocationEndpoint:                s.baseURL + "/oauth/revoke",
		RevocationEndpointAuthMethods:     []string{"none"},
		DPoPAlgs:                          s.dpopAlgs(),
	})
}

// dpopAlgs is dpop_signing_alg_values_supported: nil (left out) unless
// Config.DPoP.
func (s *Server) dpopAlgs() []string {
	if !s.cfg.DPoP {
		return nil
	}
	return dpopAlgs
}

// Metadata is public: any origin may read it (RFC 9728 §3.1), and caches may
// keep it briefly.
func publicMetadataHeaders(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "public, max-age=300")
}

func writeMetadata(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = jsonEncode(w, v)
}
