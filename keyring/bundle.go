package keyring

import (
	"fmt"
	"strings"
	"time"
)

// Kind says what a TokenBundle holds. One (server, account) holds one
// credential: saving an API key replaces OAuth tokens and vice versa, so the
// CLI never has to guess which one `ping` should send.
type Kind string

const (
	KindOAuth  Kind = "oauth"   // access/refresh tokens from an OAuth flow
	KindAPIKey Kind = "api_key" // a static key from `mcpauth apikey set`
)

// TokenBundle is the secret payload of an entry. It is serialised to JSON and
// stored encrypted (keyring backend) or as-is (file backend).
type TokenBundle struct {
	Kind     Kind   `json:"kind"`               // "" is saved as KindOAuth
	Issuer   string `json:"issuer,omitempty"`   // authorization server issuer
	Resource string `json:"resource,omitempty"` // RFC 8707 resource (canonical MCP server URL)

	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // absolute, computed from expires_in at receipt
	Scope        string    `json:"scope,omitempty"`

	// Client is the registration the tokens were issued to; refresh must use
	// the same client_id.
	Client *ClientInfo `json:"client,omitempty"`

	APIKey string `json:"api_key,omitempty"` // KindAPIKey only

	// The user the credential belongs to, when the server said (for display:
	// status shows it without decrypting anything, via EntryInfo).
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
}

// ClientInfo is the OAuth client registration (RFC 7591) behind a bundle.
type ClientInfo struct {
	ClientID                string    `json:"client_id"`
	ClientSecret            string    `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   time.Time `json:"client_secret_expires_at,omitzero"`
	TokenEndpointAuthMethod string    `json:"token_endpoint_auth_method,omitempty"`
	RedirectURIs            []string  `json:"redirect_uris,omitempty"`
}

// String redacts every secret so a bundle passed to fmt or a logger by
// mistake leaks nothing.
func (b TokenBundle) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "TokenBundle{kind=%s issuer=%q resource=%q", b.Kind, b.Issuer, b.Resource)
	if b.TokenType != "" {
		fmt.Fprintf(&sb, " token_type=%s", b.TokenType)
	}
	if !b.Expiry.IsZero() {
		fmt.Fprintf(&sb, " expiry=%s", b.Expiry.Format(time.RFC3339))
	}
	if b.Scope != "" {
		fmt.Fprintf(&sb, " scope=%q", b.Scope)
	}
	fmt.Fprintf(&sb, " access_token=%s refresh_token=%s api_key=%s",
		redacted(b.AccessToken), redacted(b.RefreshToken), redacted(b.APIKey))
	if b.Client != nil {
		fmt.Fprintf(&sb, " client=%s", b.Client)
	}
	sb.WriteString("}")
	return sb.String()
}

// GoString keeps %#v redacted too.
func (b TokenBundle) GoString() string { return b.String() }

func (c ClientInfo) String() string {
	return fmt.Sprintf("ClientInfo{client_id=%q client_secret=%s}", c.ClientID, redacted(c.ClientSecret))
}

func (c ClientInfo) GoString() string { return c.String() }

func redacted(s string) string {
	if s == "" {
		return "<empty>"
	}
	return "<redacted>"
}

// normalize fills the default Kind and checks the bundle holds a credential
// of its kind. Messages name fields, never values.
func (b TokenBundle) normalize() (TokenBundle, error) {
	if b.Kind == "" {
		b.Kind = KindOAuth
	}
	switch b.Kind {
	case KindOAuth:
		if b.AccessToken == "" && b.RefreshToken == "" {
			return b, fmt.Errorf("keyring: oauth bundle needs an access_token or refresh_token")
		}
	case KindAPIKey:
		if b.APIKey == "" {
			return b, fmt.Errorf("keyring: api_key bundle needs an api_key")
		}
	default:
		return b, fmt.Errorf("keyring: unknown bundle kind %q", b.Kind)
	}
	return b, nil
}

// EntryInfo is the non-secret metadata of an entry, as listed by
// (*Store).List for `mcpauth status`.
type EntryInfo struct {
	Server    string    `json:"server"`
	Account   string    `json:"account"`
	Kind      Kind      `json:"kind"`
	Backend   Storage   `json:"backend"` // StorageKeyring or StorageFile
	Expiry    time.Time `json:"expiry,omitzero"`
	UpdatedAt time.Time `json:"updated_at"`
	UserID    string    `json:"user_id,omitempty"`
	UserName  string    `json:"user_name,omitempty"`
}
