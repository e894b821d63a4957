package flows

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AuthMethodPrivateKeyJWT is RFC 7523 §2.2 client authentication with a
// signed assertion (OpenID Connect Core §9 private_key_jwt).
const AuthMethodPrivateKeyJWT = "private_key_jwt"

// ClientAssertionType is the client_assertion_type of RFC 7523 §2.2.
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid: long enough for
// clock skew, short enough that a captured one is soon useless.
const assertionLifetime = 60 * time.Second

// ErrUnsupportedAlg: a signing algorithm mcpauth does not implement, or one
// that does not fit the key.
var ErrUnsupportedAlg = errors.New("unsupported signing algorithm")

// SigningAlgs are the JWS algorithms a private key may sign with.
var SigningAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Signer signs JWTs with a private key: client assertions (RFC 7523 §2.2)
// and, with an ES256 key, DPoP proofs. Its String never shows the key.
type Signer struct {
	key    crypto.Signer
	method jwt.SigningMethod
	// KeyID, when set, goes in the kid header so the server can pick the
	// key among those registered (JWKS).
	KeyID string
}

// String names the algorithm only.
func (s *Signer) String() string { return "Signer{alg=" + s.Alg() + "}" }

// GoString keeps %#v free of the key.
func (s *Signer) GoString() string { return s.String() }

// Alg is the JWS alg the signer uses.
func (s *Signer) Alg() string { return s.method.Alg() }

// Public is the public half of the key.
func (s *Signer) Public() crypto.PublicKey { return s.key.Public() }

// LoadSigner reads a PEM private key (PKCS #8, PKCS #1 RSA or SEC 1 EC) from
// path. alg "" picks the key's natural algorithm (RS256, ES256/384/512 by
// curve, EdDSA); otherwise alg must fit the key. Errors name the file, never
// its content.
func LoadSigner(path, alg string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	s, err := ParseSigner(data, alg)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", path, err)
	}
	return s, nil
}

// ParseSigner is LoadSigner on PEM bytes.
func ParseSigner(pemBytes []byte, alg string) (*Signer, error) {
	var key crypto.Signer
	for rest := pemBytes; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			if key == nil {
				return nil, errors.New("no PEM private key found (want PKCS #8, RSA or EC PRIVATE KEY)")
			}
			break
		}
		switch blk.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("PKCS #8 key: %w", err)
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("PKCS #8 key of type %T cannot sign", k)
			}
			key = s
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("RSA key: %w", err)
			}
			key = k
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("EC key: %w", err)
			}
			key = k
		case "EC PARAMETERS":
			continue // openssl ecparam -genkey writes these before the key
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the key is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)")
		default:
			return nil, fmt.Errorf("PEM block %q is not a private key", blk.Type)
		}
		if key != nil {
			break
		}
	}
	return NewSigner(key, alg)
}

// NewSigner wraps key for alg ("" for the key's natural algorithm).
func NewSigner(key crypto.Signer, alg string) (*Signer, error) {
	natural, err := naturalAlg(key)
	if err != nil {
		return nil, err
	}
	if alg == "" {
		alg = natural
	}
	if !slices.Contains(SigningAlgs, alg) {
		return nil, fmt.Errorf("%w %q (supported: %v)", ErrUnsupportedAlg, alg, SigningAlgs)
	}
	switch key.(type) {
	case *rsa.PrivateKey:
		if alg[0] != 'R' && alg[0] != 'P' {
			return nil, fmt.Errorf("%w: %s needs an RSA key, not %s", ErrUnsupportedAlg, alg, natural)
		}
	default:
		if alg != natural {
			return nil, fmt.Errorf("%w: %s does not fit a %s key", ErrUnsupportedAlg, alg, natural)
		}
	}
	m := jwt.GetSigningMethod(alg)
	if m == nil {
		return nil, fmt.Errorf("%w %q", ErrUnsupportedAlg, alg)
	}
	return &Signer{key: key, method: m}, nil
}

// naturalAlg names the algorithm a key signs with, or refuses the key.
func naturalAlg(key crypto.Signer) (string, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return "", fmt.Errorf("%w: RSA keys need at least 2048 bits, this one has %d", ErrUnsupportedAlg, k.N.BitLen())
		}
		return "RS256", nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", fmt.Errorf("%w: EC curve %s", ErrUnsupportedAlg, k.Curve.Params().Name)
	case ed25519.PrivateKey:
		return "EdDSA", nil
	case nil:
		return "", errors.New("no key")
	}
	return "", fmt.Errorf("%w: keys of type %T", ErrUnsupportedAlg, key)
}

// sign signs claims with header fields extra (typ, jwk, ...).
func (s *Signer) sign(claims jwt.MapClaims, extra map[string]any) (string, error) {
	t := jwt.NewWithClaims(s.method, claims)
	if s.KeyID != "" {
		t.Header["kid"] = s.KeyID
	}
	for k, v := range extra {
		t.Header[k] = v
	}
	out, err := t.SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("signing a %s JWT: %w", s.Alg(), err)
	}
	return out, nil
}

// ClientAssertion returns an RFC 7523 §3 client authentication JWT:
// iss = sub = clientID, aud = audience (the token endpoint, or the issuer),
// a fresh jti, iat = now and exp = now + assertionLifetime.
func (s *Signer) ClientAssertion(clientID, audience string, now time.Time) (string, error) {
	if clientID == "" || audience == "" {
		return "", errors.New("client assertion: client ID and audience are required")
	}
	jti, err := newJTI()
	if err != nil {
		return "", err
	}
	return s.sign(jwt.MapClaims{
		"iss": clientID, "sub": clientID, "aud": audience, "jti": jti,
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix(),
	}, map[string]any{"typ": "JWT"})
}

// newJTI is 128 random bits, base64url.
func newJTI() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating jti: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
