package creds

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind says what a Bundle holds. One (server, account) holds one
// credential: saving an API key replaces OAuth tokens and vice versa, so the
// CLI never has to guess which one `ping` should send.
type Kind string

const (
	KindOAuth  Kind = "oauth"   // access/refresh tokens from an OAuth flow
	KindAPIKey Kind = "api_key" // a static key from `mcpauth apikey set`
)

// Bundle is the secret payload of a stored credential. Its JSON is what
// keyring seals; the member names are those keyring.TokenBundle used, so
// entries written before this package existed still load (change none).
type Bundle struct {
	Kind     Kind   `json:"kind"`               // "" is saved as KindOAuth
	Issuer   string `json:"issuer,omitempty"`   // authorization server issuer
	Resource string `json:"resource,omitempty"` // RFC 8707 resource (canonical MCP server URL)

	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // absolute, computed from expires_in at receipt
	// Lifetime is the access token's expires_in, in seconds: the early
	// refresh margin follows it (flows.RefreshMargin); 0 when unknown.
	Lifetime int64  `json:"lifetime,omitempty"`
	Scope    string `json:"scope,omitempty"`
	// RefreshExpiry is when the refresh token expires, when the server said.
	RefreshExpiry time.Time `json:"refresh_expiry,omitzero"`

	// TokenEndpoint and RevocationEndpoint are the issuer's, recorded at
	// login so refresh and logout need no discovery; they belong to Issuer
	// and the refresh token is only ever sent to TokenEndpoint.
	TokenEndpoint      string `json:"token_endpoint,omitempty"`
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`

	// Client is the registration the tokens were issued to; refresh must use
	// the same client_id.
	Client *ClientInfo `json:"client,omitempty"`

	APIKey string `json:"api_key,omitempty"` // KindAPIKey only

	// The user the credential belongs to, when the server said (for display:
	// status shows it without decrypting anything, via Entry).
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
	// DPoPKey is the private key (PKCS #8, base64url) the tokens are bound
	// to (RFC 9449), kept across renewals. Secret: never printed.
	DPoPKey string `json:"dpop_key,omitempty"`
	// Grant says how to renew a login no user takes part in: the grant is
	// run again when the token expires.
	Grant *GrantInfo `json:"grant,omitempty"`
}

// Machine grant types (GrantInfo.Type).
const (
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "jwt_bearer"
	GrantEnterprise        = "enterprise" // ID token -> ID-JAG -> JWT bearer
)

// GrantInfo is what renewing a machine login needs. Secrets live in the
// encrypted bundle (Client.ClientSecret, IdPClient.ClientSecret); keys and
// assertions stay in their files, which are read again at each renewal so a
// rotated key or a refreshed workload token is picked up.
type GrantInfo struct {
	Type              string      `json:"type"`
	TokenEndpoint     string      `json:"token_endpoint"`
	Scope             string      `json:"scope,omitempty"`
	NoResource        bool        `json:"no_resource,omitempty"`
	PrivateKeyFile    string      `json:"private_key_file,omitempty"`
	SigningAlg        string      `json:"signing_alg,omitempty"`
	KeyID             string      `json:"key_id,omitempty"`
	AssertionAudience string      `json:"assertion_audience,omitempty"`
	AssertionFile     string      `json:"assertion_file,omitempty"`
	AssertionEnv      string      `json:"assertion_env,omitempty"` // variable holding the assertion
	IDTokenFile       string      `json:"id_token_file,omitempty"`
	IdPTokenEndpoint  string      `json:"idp_token_endpoint,omitempty"`
	IdPClient         *ClientInfo `json:"idp_client,omitempty"`
	// AllowInsecureKeyFile keeps login's consent to key, assertion and
	// ID token files that group or others may read, for the renewals.
	AllowInsecureKeyFile bool `json:"allow_insecure_key_file,omitempty"`
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
func (b Bundle) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Bundle{kind=%s issuer=%q resource=%q", b.Kind, b.Issuer, b.Resource)
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
	if b.DPoPKey != "" {
		sb.WriteString(" dpop_key=<redacted>")
	}
	if b.Grant != nil {
		fmt.Fprintf(&sb, " grant=%s", b.Grant.Type)
	}
	sb.WriteString("}")
	return sb.String()
}

// Refreshable reports whether the bundle can be refreshed without a login.
func (b Bundle) Refreshable() bool {
	return b.Kind != KindAPIKey && b.RefreshToken != "" && b.TokenEndpoint != "" && b.Client != nil && b.Client.ClientID != ""
}

// GoString keeps %#v redacted too.
func (b Bundle) GoString() string { return b.String() }

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
func (b Bundle) normalize() (Bundle, error) {
	// Who the server said the user is, for display only, and within the
	// entry metadata's size whatever the server sent: a login must not
	// fail, or a screen fill, for a name.
	b.UserID, b.UserName = cutUserText(b.UserID), cutUserText(b.UserName)
	if b.Kind == "" {
		b.Kind = KindOAuth
	}
	switch b.Kind {
	case KindOAuth:
		if b.AccessToken == "" && b.RefreshToken == "" {
			return b, fmt.Errorf("creds: oauth bundle needs an access_token or refresh_token")
		}
	case KindAPIKey:
		if b.APIKey == "" {
			return b, fmt.Errorf("creds: api_key bundle needs an api_key")
		}
	default:
		return b, fmt.Errorf("creds: unknown bundle kind %q", b.Kind)
	}
	return b, nil
}

// maxUserText bounds a stored user id or name, in runes: as many as the
// CLI shows of one value (redact.MaxField).
const maxUserText = 200

// cutUserText keeps s to maxUserText runes, "…" last when cut; it is
// escaped when shown, not here.
func cutUserText(s string) string {
	if utf8.RuneCountInString(s) <= maxUserText {
		return s
	}
	return string([]rune(s)[:maxUserText-1]) + "…"
}
