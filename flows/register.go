package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// ClientMetadata is an RFC 7591 §2 client registration request.
type ClientMetadata struct {
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	ApplicationType         string   `json:"application_type,omitempty"` // OpenID Connect Registration §2: "native" for a CLI
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	Contacts                []string `json:"contacts,omitempty"`
	TOSURI                  string   `json:"tos_uri,omitempty"`
	PolicyURI               string   `json:"policy_uri,omitempty"`
	JWKSURI                 string   `json:"jwks_uri,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// ClientInformation is an RFC 7591 §3.2.1 registration response: the
// metadata as the server accepted it plus the issued credentials.
type ClientInformation struct {
	ClientID              string `json:"client_id"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at,omitempty"`
	ClientSecretExpiresAt int64  `json:"client_secret_expires_at,omitempty"` // 0: never
	// RFC 7592 management, when the server offers it.
	RegistrationAccessToken string `json:"registration_access_token,omitempty"`
	RegistrationClientURI   string `json:"registration_client_uri,omitempty"`
	ClientMetadata
}

// Register performs RFC 7591 dynamic client registration at endpoint. A 201
// (or 200, which some servers send) with a client_id succeeds; an error
// response comes back as *OAuthError (invalid_redirect_uri,
// invalid_client_metadata, ...).
func Register(ctx context.Context, hc *http.Client, endpoint string, md ClientMetadata) (*ClientInformation, error) {
	resp, body, err := postJSON(ctx, hc, endpoint, md)
	if err != nil {
		return nil, fmt.Errorf("register at %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("register at %s: %w", endpoint, responseError(resp, body))
	}
	var ci ClientInformation
	if err := json.Unmarshal(body, &ci); err != nil {
		return nil, fmt.Errorf("register at %s: response is not client information: %w", endpoint, err)
	}
	if ci.ClientID == "" {
		return nil, fmt.Errorf("register at %s: %w", endpoint, errors.New("response has no client_id"))
	}
	return &ci, nil
}

// NativeClientMetadata is the registration an MCP client sends for itself:
// a native public client (application_type native, which lets a server that
// defaults to web accept loopback http redirect URIs; OpenID Connect
// Registration §2) using the authorization code grant with refresh (and the
// device grant where offered). Its scope is what it will ask for plus every
// scope the resource advertises (the PRM's scopes_supported, else the
// authorization server's), since a server may grant a client registered
// without a scope only its default scopes. The CLI and the conformance
// suite both register through it.
func NativeClientMetadata(disc *Discovery, name string, redirectURIs []string, scope string) ClientMetadata {
	md := &AuthServerMetadata{}
	if disc.AuthServer != nil {
		md = disc.AuthServer
	}
	advertised := md.ScopesSupported
	if disc.ResourceMetadata != nil && len(disc.ResourceMetadata.ScopesSupported) > 0 {
		advertised = disc.ResourceMetadata.ScopesSupported
	}
	grants := []string{"authorization_code", oauthwire.GrantTypeRefreshToken}
	if disc.SupportsDeviceFlow() || slices.Contains(md.GrantTypesSupported, GrantTypeDeviceCode) {
		grants = append(grants, GrantTypeDeviceCode)
	}
	return ClientMetadata{
		ClientName:              name,
		RedirectURIs:            redirectURIs,
		ApplicationType:         applicationTypeNative,
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: AuthMethodNone,
		Scope:                   WithOfflineAccess(oauthwire.UnionScopes(scope, strings.Join(advertised, " ")), md),
	}
}
