package flows

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// DPoP (RFC 9449) binds tokens to a key the client holds: every token and
// resource request carries a fresh proof, a JWT signed with that key over the
// request's method and URL (and, at a resource, the token's hash).

// TokenTypeDPoP is the token_type of a DPoP-bound token (RFC 9449 §5).
const TokenTypeDPoP = "DPoP"

// DPoPAlg is the only proof algorithm mcpauth uses: every DPoP server must
// accept ES256 in practice, and one algorithm keeps the stored key simple.
const DPoPAlg = "ES256"

var (
	// ErrDPoPNonceLoop: the server asked for a new nonce again right after
	// being given the one it asked for (RFC 9449 §8: one retry).
	ErrDPoPNonceLoop = errors.New("server keeps asking for a new DPoP nonce")
	// ErrNotDPoPBound: DPoP was used but the server issued a token of
	// another type (RFC 9449 §5: the client must not use it as bound).
	ErrNotDPoPBound = errors.New("DPoP was requested but the token is not DPoP-bound")
	// ErrUnrequestedDPoP: the server answered token_type DPoP to a request
	// without a proof: the token is bound to no key of this client, and
	// sent as Bearer it would be refused or, worse, accepted.
	ErrUnrequestedDPoP = errors.New("the server issued a DPoP-bound token (token_type DPoP) to a request without a DPoP proof; refused: no key of this client binds it")
	// ErrDPoPAlgUnsupported: the server lists DPoP algorithms, not ES256.
	ErrDPoPAlgUnsupported = errors.New("server does not accept ES256 DPoP proofs")
)

// DPoP is a proof-of-possession key with the nonces servers handed out, kept
// per request URL (without query): the authorization server and the
// resource keep their own nonces (§8), and may share an origin.
// Safe for concurrent use. Its String never shows the key.
type DPoP struct {
	key   *ecdsa.PrivateKey
	jwk   map[string]any
	Clock Clock // nil means RealClock

	mu     sync.Mutex
	nonces map[string]string
}

// NewDPoP generates a fresh P-256 key.
func NewDPoP(clk Clock) (*DPoP, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a DPoP key: %w", err)
	}
	return newDPoP(k, clk), nil
}

// ParseDPoPKey restores a key saved with MarshalKey.
func ParseDPoPKey(s string, clk Clock) (*DPoP, error) {
	der, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("DPoP key: not a P-256 key")
	}
	return newDPoP(ek, clk), nil
}

func newDPoP(k *ecdsa.PrivateKey, clk Clock) *DPoP {
	pub, _ := k.PublicKey.ECDH() // P-256 always converts
	raw := pub.Bytes()           // 0x04 || X || Y, 32 bytes each
	b64 := base64.RawURLEncoding.EncodeToString
	return &DPoP{key: k, Clock: clk, nonces: map[string]string{},
		jwk: map[string]any{"kty": "EC", "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:65])}}
}

// MarshalKey serialises the private key (PKCS #8, base64url) for the
// encrypted token bundle. Never log it.
func (d *DPoP) MarshalKey() (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(d.key)
	if err != nil {
		return "", fmt.Errorf("DPoP key: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(der), nil
}

// String shows the key's thumbprint only.
func (d *DPoP) String() string { return "DPoP{jkt=" + d.Thumbprint() + "}" }

// GoString keeps %#v free of the key.
func (d *DPoP) GoString() string { return d.String() }

// PublicKey is the key servers verify proofs with.
func (d *DPoP) PublicKey() *ecdsa.PublicKey { return &d.key.PublicKey }

// Thumbprint is the RFC 7638 JWK SHA-256 thumbprint (the jkt a bound token's
// cnf claim carries).
func (d *DPoP) Thumbprint() string {
	// Required members in lexicographic order, no whitespace (RFC 7638 §3).
	s := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, d.jwk["x"], d.jwk["y"])
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Nonce is the last nonce the server sent for rawURL ("" if none).
func (d *DPoP) Nonce(rawURL string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[htu(rawURL)]
}

// SetNonce remembers the DPoP-Nonce a server sent for rawURL.
func (d *DPoP) SetNonce(rawURL, nonce string) {
	if nonce == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nonces[htu(rawURL)] = nonce
}

// htu is rawURL without query and fragment (§4.2).
func htu(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// Proof returns a fresh proof for one request (RFC 9449 §4.2): typ
// dpop+jwt, the public key as jwk, and claims jti (new every call), htm,
// htu (rawURL without query and fragment), iat, the origin's nonce when one
// is known for that URL, and ath = base64url(SHA-256(accessToken)) when accessToken is
// not empty (requests to a resource, §7.1).
func (d *DPoP) Proof(method, rawURL, accessToken string) (string, error) {
	if _, err := url.Parse(rawURL); err != nil {
		return "", fmt.Errorf("DPoP proof: %w", err)
	}
	jti, err := newJTI()
	if err != nil {
		return "", err
	}
	claims := jwt.MapClaims{"jti": jti, "htm": method, "htu": htu(rawURL), "iat": clockOr(d.Clock).Now().Unix()}
	if n := d.Nonce(rawURL); n != "" {
		claims["nonce"] = n
	}
	if accessToken != "" {
		claims["ath"] = accessTokenHash(accessToken)
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = d.jwk
	out, err := t.SignedString(d.key)
	if err != nil {
		return "", fmt.Errorf("signing a DPoP proof: %w", err)
	}
	return out, nil
}

// accessTokenHash is the ath claim: base64url(SHA-256(token)).
func accessTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Headers returns the two request headers for accessToken at (method,
// rawURL): "Authorization: DPoP <token>" and "DPoP: <proof>".
func (d *DPoP) Headers(method, rawURL, accessToken string) (http.Header, error) {
	return CredentialHeader(method, rawURL, Credential{Token: accessToken, DPoP: d})
}

// Client returns a copy of hc whose requests present accessToken as a
// DPoP-bound token to the resource at origin o, and to nothing else (a
// Transport): whatever Authorization the caller set is replaced by
// "DPoP <token>", a fresh proof is attached to every request, and a 401
// asking for a nonce is retried once with it.
func (d *DPoP) Client(hc *http.Client, o Origin, accessToken string) *http.Client {
	return (&Transport{Origin: o, Source: StaticSource(Credential{Token: accessToken, DPoP: d})}).Client(hc)
}

// asksForNonce reports a DPoP challenge with error=use_dpop_nonce (§9).
func asksForNonce(h http.Header) bool {
	for _, c := range oauthwire.ParseChallenges(h) {
		if strings.EqualFold(c.Scheme, TokenTypeDPoP) && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

// DPoPSupported reports whether the authorization server advertises DPoP
// (RFC 9449 §5.1), and whether it takes ES256.
func DPoPSupported(md *AuthServerMetadata) (advertised, es256 bool) {
	if md == nil || len(md.DPoPSigningAlgValuesSupported) == 0 {
		return false, false
	}
	for _, a := range md.DPoPSigningAlgValuesSupported {
		if a == DPoPAlg {
			return true, true
		}
	}
	return true, false
}
