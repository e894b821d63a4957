package flows

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Token endpoint client authentication methods (RFC 7591 §2).
const (
	AuthMethodNone  = "none"
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
)

// GrantTypeDeviceCode is the RFC 8628 §3.4 grant type.
const GrantTypeDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"

// ClientSource says where a Client's identity came from.
type ClientSource string

const (
	SourcePreRegistered    ClientSource = "pre-registered"    // ClientConfig.ClientID
	SourceMetadataDocument ClientSource = "metadata-document" // client ID metadata document URL
	SourceCache            ClientSource = "cache"             // RegistrationCache hit
	SourceRegistered       ClientSource = "registered"        // fresh dynamic registration
)

// Client is the identity the flows present to the authorization server.
type Client struct {
	ID         string `json:"client_id"`
	Secret     string `json:"-"`
	AuthMethod string `json:"token_endpoint_auth_method"` // AuthMethod* constant
	// RedirectURIs are the registered redirect URIs; AuthCode tries their
	// loopback ports first.
	RedirectURIs []string     `json:"redirect_uris,omitempty"`
	Source       ClientSource `json:"source"`
}

// RegistrationCache keeps dynamic registrations per (issuer, resource). The
// CLI provides the implementation.
type RegistrationCache interface {
	Get(issuer, resource string) (*ClientInformation, bool)
	Put(issuer, resource string, ci *ClientInformation) error
}

// ClientConfig configures ResolveClient. The zero value registers dynamically
// without caching.
type ClientConfig struct {
	HTTPClient *http.Client
	Clock      Clock // for client_secret_expires_at; nil means RealClock
	// ClientID, with an optional ClientSecret, is a pre-registered client.
	ClientID     string
	ClientSecret string
	// AuthMethod overrides the token endpoint auth method of a
	// pre-registered client.
	AuthMethod string
	// MetadataDocumentURL is an https URL serving this client's metadata
	// document, used as client_id when the server advertises support.
	MetadataDocumentURL string
	Cache               RegistrationCache
	ClientName          string   // default "mcpauth CLI"
	RedirectURIs        []string // default DefaultRedirectURIs(disc.Resource)
	Scope               string   // default disc.Scope (offline_access is added when the server lists it)
}

// ResolveClient picks the client identity, in order: the pre-registered
// ClientID; the client ID metadata document URL when the server supports
// them; a cached registration for (issuer, resource) whose secret has not
// expired; a new dynamic registration (stored in the cache).
func ResolveClient(ctx context.Context, cfg ClientConfig, disc *Discovery) (Client, error) {
	if disc == nil || disc.AuthServer == nil {
		return Client{}, errors.New("resolve client: discovery has no authorization server metadata")
	}
	md := disc.AuthServer
	switch {
	case cfg.ClientID != "":
		return Client{ID: cfg.ClientID, Secret: cfg.ClientSecret, AuthMethod: staticAuthMethod(cfg, md),
			RedirectURIs: cfg.RedirectURIs, Source: SourcePreRegistered}, nil
	case cfg.MetadataDocumentURL != "" && md.ClientIDMetadataDocumentSupported:
		if err := oauthwire.CheckSecure("client metadata document", cfg.MetadataDocumentURL, false); err != nil {
			return Client{}, err
		}
		return Client{ID: cfg.MetadataDocumentURL, AuthMethod: AuthMethodNone,
			RedirectURIs: cfg.RedirectURIs, Source: SourceMetadataDocument}, nil
	}
	if cfg.Cache != nil {
		if ci, ok := cfg.Cache.Get(disc.Issuer, disc.Resource); ok && ci != nil && ci.ClientID != "" && !secretExpired(ci, clockOr(cfg.Clock).Now()) {
			c := clientFromInfo(ci)
			c.Source = SourceCache
			return c, nil
		}
	}
	return cfg.Reregister(ctx, disc)
}

// Reregister registers a new client dynamically, replacing any cached
// registration. Flows call it once after invalid_client.
func (cfg ClientConfig) Reregister(ctx context.Context, disc *Discovery) (Client, error) {
	if disc == nil || disc.AuthServer == nil {
		return Client{}, errors.New("register: discovery has no authorization server metadata")
	}
	md := disc.AuthServer
	if md.RegistrationEndpoint == "" {
		return Client{}, fmt.Errorf("%s offers no dynamic registration (no registration_endpoint): %w", disc.Issuer, ErrNoClient)
	}
	name, redirects, scope := cfg.ClientName, cfg.RedirectURIs, cfg.Scope
	if name == "" {
		name = "mcpauth CLI"
	}
	if redirects == nil {
		redirects = DefaultRedirectURIs(disc.Resource)
	}
	if scope == "" {
		scope = disc.Scope
	}
	req := NativeClientMetadata(disc, name, redirects, scope)
	ci, err := Register(ctx, cfg.HTTPClient, md.RegistrationEndpoint, req)
	if err != nil {
		return Client{}, err
	}
	if cfg.Cache != nil {
		if err := cfg.Cache.Put(disc.Issuer, disc.Resource, ci); err != nil {
			return Client{}, fmt.Errorf("caching registration: %w", err)
		}
	}
	c := clientFromInfo(ci)
	c.Source = SourceRegistered
	return c, nil
}

func clientFromInfo(ci *ClientInformation) Client {
	c := Client{ID: ci.ClientID, Secret: ci.ClientSecret, AuthMethod: ci.TokenEndpointAuthMethod, RedirectURIs: ci.RedirectURIs}
	if c.AuthMethod == "" {
		c.AuthMethod = AuthMethodNone
		if c.Secret != "" {
			c.AuthMethod = AuthMethodBasic // RFC 7591 §2 default
		}
	}
	return c
}

func secretExpired(ci *ClientInformation, now time.Time) bool {
	return ci.ClientSecret != "" && ci.ClientSecretExpiresAt != 0 && !now.Before(time.Unix(ci.ClientSecretExpiresAt, 0))
}

// staticAuthMethod picks how a pre-registered client authenticates: the
// explicit choice, none without a secret, else what the server lists
// (client_secret_basic is the RFC 8414 default when it lists nothing).
func staticAuthMethod(cfg ClientConfig, md *AuthServerMetadata) string {
	switch {
	case cfg.AuthMethod != "":
		return cfg.AuthMethod
	case cfg.ClientSecret == "":
		return AuthMethodNone
	case slices.Contains(md.TokenEndpointAuthMethodsSupported, AuthMethodBasic):
		return AuthMethodBasic
	case slices.Contains(md.TokenEndpointAuthMethodsSupported, AuthMethodPost):
		return AuthMethodPost
	}
	return AuthMethodBasic
}

// DefaultRedirectURIs returns three loopback redirect URIs whose ports derive
// from the resource, so a client registered once keeps working when one port
// is busy and the server matches redirect URIs exactly (ports 20000–32767,
// below the Linux and Windows ephemeral ranges).
func DefaultRedirectURIs(resource string) []string {
	canon, err := CanonicalResource(resource)
	if err != nil {
		canon = resource
	}
	sum := sha256.Sum256([]byte(canon))
	var out []string
	seen := map[uint32]bool{}
	for i := 0; len(out) < 3 && i+4 <= len(sum); i += 4 {
		port := 20000 + binary.BigEndian.Uint32(sum[i:])%12768
		if seen[port] {
			continue
		}
		seen[port] = true
		out = append(out, fmt.Sprintf("http://127.0.0.1:%d/callback", port))
	}
	return out
}
