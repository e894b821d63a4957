// Package devidp is a small but genuine OpenID Connect provider for
// development. When no real identity provider is configured, `mcpauth serve`
// runs it on its own loopback origin and logs browsers in through it exactly as
// it would through any issuer: discovery, authorization code with PKCE, an
// ES256-signed id_token and a JWKS that go-oidc verifies unmodified.
//
// Anyone who can reach it can log in as anyone by typing a name. It says so on
// every page and must never face a network.
package devidp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/server/clock"
)

// Lifetimes and bounds. The code lifetime is short because the relying party
// exchanges it within the same redirect.
const (
	codeTTL      = 60 * time.Second
	formTTL      = 10 * time.Minute // how long a rendered sign-in form stays usable
	tokenTTL     = time.Hour        // id_token and (unusable) access_token
	maxBodyBytes = 64 << 10
	maxParamLen  = 1024 // state, nonce and friends; real ones are far shorter
	maxNameLen   = 64   // characters of a user name
	maxCodes     = 10000
)

// SubjectNamespace is the stable name relying parties can key this
// provider's subjects by: its issuer URL changes with its port.
const SubjectNamespace = "mcpauth-dev-idp"

// DefaultClientID is the client ID used when Config.ClientID is empty.
const DefaultClientID = "mcpauth-dev"

// Config configures a Provider. Clock, Logger, ClientID and ClientSecret have
// defaults; Issuer and RedirectURIs are required by New (Start fills Issuer).
type Config struct {
	// Issuer is the provider's absolute http(s) URL without query or
	// fragment. Endpoints live under its path.
	Issuer string
	// Clock drives code, form and token expiry. Default clock.Real.
	Clock clock.Clock
	// Logger receives sign-in events; never codes or secrets. Default: discard.
	Logger *slog.Logger
	// ClientID defaults to DefaultClientID; ClientSecret defaults to a fresh
	// random secret (read it back with Provider.ClientSecret).
	ClientID, ClientSecret string
	// RedirectURIs are the relying party's callback URLs, matched exactly.
	RedirectURIs []string
}

// Provider is a development OpenID Connect provider. It is safe for
// concurrent use.
type Provider struct {
	issuer       string
	base         string // issuer path without trailing slash, the mux prefix
	clock        clock.Clock
	log          *slog.Logger
	clientID     string
	clientSecret string
	redirectURIs map[string]bool

	key    *ecdsa.PrivateKey
	kid    string
	jwk    map[string]string
	macKey []byte // HMAC key protecting the hidden fields of the sign-in form
	codes  *codeStore
}

// New validates cfg, fills defaults and generates a fresh ES256 signing key.
func New(cfg Config) (*Provider, error) {
	u, err := url.Parse(cfg.Issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("devidp: issuer %q must be an absolute http(s) URL without query or fragment", cfg.Issuer)
	}
	// The path becomes a ServeMux prefix, where braces and the like mean
	// wildcards; a plain path is all an issuer needs.
	if strings.ContainsFunc(u.Path, func(r rune) bool { return !isPathChar(r) }) {
		return nil, fmt.Errorf("devidp: issuer path %q may hold only letters, digits and -._~/", u.Path)
	}
	if len(cfg.RedirectURIs) == 0 {
		return nil, errors.New("devidp: at least one redirect URI is required")
	}
	p := &Provider{
		issuer:       cfg.Issuer,
		base:         strings.TrimSuffix(u.Path, "/"),
		clock:        cfg.Clock,
		log:          cfg.Logger,
		clientID:     cfg.ClientID,
		clientSecret: cfg.ClientSecret,
		redirectURIs: map[string]bool{},
		codes:        &codeStore{codes: map[[32]byte]grant{}},
	}
	for _, ru := range cfg.RedirectURIs {
		if r, err := url.Parse(ru); err != nil || !r.IsAbs() || r.Fragment != "" {
			return nil, fmt.Errorf("devidp: redirect URI %q must be absolute without fragment", ru)
		}
		p.redirectURIs[ru] = true
	}
	if p.clock == nil {
		p.clock = clock.Real{}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.clientID == "" {
		p.clientID = DefaultClientID
	}
	if p.clientSecret == "" {
		if p.clientSecret, err = randomToken(); err != nil {
			return nil, fmt.Errorf("devidp: client secret: %w", err)
		}
	}
	if p.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, fmt.Errorf("devidp: generating signing key: %w", err)
	}
	if p.jwk, p.kid, err = publicJWK(&p.key.PublicKey); err != nil {
		return nil, fmt.Errorf("devidp: encoding signing key: %w", err)
	}
	p.macKey = make([]byte, 32)
	if _, err := rand.Read(p.macKey); err != nil {
		return nil, fmt.Errorf("devidp: form key: %w", err)
	}
	return p, nil
}

// Issuer returns the issuer URL exactly as the discovery document states it.
func (p *Provider) Issuer() string { return p.issuer }

// ClientID returns the one client this provider accepts.
func (p *Provider) ClientID() string { return p.clientID }

// ClientSecret returns that client's secret (configured or generated).
func (p *Provider) ClientSecret() string { return p.clientSecret }

// Handler serves the provider's endpoints under the issuer's path.
func (p *Provider) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p.base+"/.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET "+p.base+"/jwks", p.jwks)
	mux.HandleFunc("GET "+p.base+"/authorize", p.authorizeGet)
	mux.HandleFunc("POST "+p.base+"/authorize", p.authorizePost)
	mux.HandleFunc("POST "+p.base+"/token", p.token)
	return mux
}

func (p *Provider) endpoint(path string) string {
	return strings.TrimSuffix(p.issuer, "/") + path
}

// discovery serves OpenID Connect Discovery 1.0 §3 metadata.
func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         p.issuer,
		"authorization_endpoint":                         p.endpoint("/authorize"),
		"token_endpoint":                                 p.endpoint("/token"),
		"jwks_uri":                                       p.endpoint("/jwks"),
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code"},
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"ES256"},
		"code_challenge_methods_supported":               []string{"S256"},
		"scopes_supported":                               []string{"openid", "profile"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post"},
		"claims_supported":                               []string{"iss", "sub", "aud", "exp", "iat", "nonce", "name", "preferred_username"},
		"authorization_response_iss_parameter_supported": true,
	})
}

// jwks serves the public signing key (RFC 7517 §5).
func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{p.jwk}})
}

// publicJWK encodes pub as an RFC 7518 §6.2 EC key whose kid is its RFC 7638
// thumbprint, so the kid names the key and nothing else.
func publicJWK(pub *ecdsa.PublicKey) (map[string]string, string, error) {
	ek, err := pub.ECDH()
	if err != nil {
		return nil, "", err
	}
	raw := ek.Bytes() // 0x04 || X || Y, each coordinate 32 bytes for P-256
	b64 := base64.RawURLEncoding.EncodeToString
	x, y := b64(raw[1:33]), b64(raw[33:65])
	// RFC 7638 §3.2: required members, lexicographic order, no whitespace.
	thumb := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	kid := b64(thumb[:])
	return map[string]string{"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "use": "sig", "alg": "ES256"}, kid, nil
}

func isPathChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~/", r)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// randomToken returns 32 random bytes, base64url without padding.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
