package server

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DPoP (RFC 9449), when Config.DPoP is set: a token request with a valid
// proof gets a token bound to the proof's key (cnf.jkt, token_type DPoP),
// which /api/* and /mcp then accept only as "Authorization: DPoP" with a
// fresh proof of that key. Requests without a proof are served as before.

const (
	// dpopAlg is the one proof algorithm accepted: every DPoP client
	// implements ES256, and one algorithm keeps key parsing small.
	dpopAlg = "ES256"
	// dpopProofWindow is how old a proof's iat may be; its jti is kept
	// that long (plus leeway) so it is accepted once.
	dpopProofWindow = 60 * time.Second
	// errInvalidDPoPProof is RFC 9449 §5 and §7.1's error code.
	errInvalidDPoPProof = "invalid_dpop_proof"
	tokenTypeDPoP       = "DPoP"
	maxDPoPProofLen     = 4096
)

var dpopAlgs = []string{dpopAlg}

type dpopJKTKey struct{}

// withDPoPKey carries the thumbprint of a token request's proof key to
// issue, which binds the token to it.
func withDPoPKey(r *http.Request, jkt string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), dpopJKTKey{}, jkt))
}

func dpopKeyOf(r *http.Request) string {
	jkt, _ := r.Context().Value(dpopJKTKey{}).(string)
	return jkt
}

// confirmation is RFC 7800's cnf claim with RFC 9449 §6.1's jkt.
type confirmation struct {
	JKT string `json:"jkt"`
}

// errDPoPProof is a refused proof; its text goes to the client.
type errDPoPProof struct{ why string }

func (e *errDPoPProof) Error() string { return e.why }

func proofErr(format string, args ...any) error { return &errDPoPProof{fmt.Sprintf(format, args...)} }

// verifyDPoPProof checks the request's one DPoP header (RFC 9449 §4.3):
// typ dpop+jwt, ES256 over a public P-256 jwk, htm the request's method,
// htu the URL it was sent to, iat within the window, a jti never seen, and
// ath the hash of accessToken when one is presented. It returns the key's
// RFC 7638 thumbprint; a refusal is an *errDPoPProof.
func (s *Server) verifyDPoPProof(r *http.Request, htu, accessToken string) (string, error) {
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 || vals[0] == "" || len(vals[0]) > maxDPoPProofLen {
		return "", proofErr("exactly one DPoP header of at most %d bytes is required", maxDPoPProofLen)
	}
	var jkt string
	keyFunc := func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ must be dpop+jwt")
		}
		k, thumb, err := dpopJWK(t.Header["jwk"])
		jkt = thumb
		return k, err
	}
	mc := jwt.MapClaims{}
	if _, err := jwt.NewParser(jwt.WithValidMethods(dpopAlgs), jwt.WithoutClaimsValidation()).ParseWithClaims(vals[0], mc, keyFunc); err != nil {
		return "", proofErr("the proof does not verify (ES256, typ dpop+jwt, a public P-256 jwk)")
	}
	jti, _ := mc["jti"].(string)
	htm, _ := mc["htm"].(string)
	gotHTU, _ := mc["htu"].(string)
	ath, _ := mc["ath"].(string)
	iat, iatErr := mc.GetIssuedAt()
	now := s.clock.Now()
	switch {
	case jti == "" || len(jti) > 256:
		return "", proofErr("jti is required")
	case htm != r.Method:
		return "", proofErr("htm must be %s", r.Method)
	case gotHTU != htu:
		return "", proofErr("htu must be %s", htu)
	case iatErr != nil || iat == nil:
		return "", proofErr("iat is required")
	case iat.After(now.Add(jwtLeeway)) || iat.Before(now.Add(-dpopProofWindow)):
		return "", proofErr("iat must be within %v of the server's time", dpopProofWindow)
	case accessToken != "" && ath != accessTokenHash(accessToken):
		return "", proofErr("ath must be the hash of the access token")
	case accessToken == "" && ath != "":
		return "", proofErr("ath is only for requests with an access token")
	case !s.replays.firstUse("dpop "+jkt+" "+jti, iat.Add(dpopProofWindow+jwtLeeway), now):
		return "", proofErr("the proof's jti was used before")
	}
	return jkt, nil
}

// dpopJWK reads a proof's jwk header: a public P-256 key, never one with
// the private part. It returns the key and its RFC 7638 thumbprint.
func dpopJWK(v any) (*ecdsa.PublicKey, string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", errors.New("jwk is required")
	}
	x, _ := m["x"].(string)
	y, _ := m["y"].(string)
	if m["kty"] != "EC" || m["crv"] != "P-256" || m["d"] != nil {
		return nil, "", errors.New("jwk must be a public EC P-256 key")
	}
	xb, err1 := base64.RawURLEncoding.DecodeString(x)
	yb, err2 := base64.RawURLEncoding.DecodeString(y)
	if err1 != nil || err2 != nil || len(xb) != 32 || len(yb) != 32 {
		return nil, "", errors.New("jwk x and y must be 32 bytes each")
	}
	// ecdh refuses points off the curve.
	if _, err := ecdh.P256().NewPublicKey(append(append([]byte{4}, xb...), yb...)); err != nil {
		return nil, "", errors.New("jwk is not a P-256 point")
	}
	k := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(xb), Y: new(big.Int).SetBytes(yb)}
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return k, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// accessTokenHash is RFC 9449 §4.2's ath.
func accessTokenHash(token string) string {
	sum := sum256(token)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// tokenDPoPProof binds a token request to its proof's key when DPoP is on
// and a proof came; it reports false after answering a bad proof.
func (s *Server) tokenDPoPProof(w http.ResponseWriter, r *http.Request, g *grantType) (*http.Request, bool) {
	if !s.cfg.DPoP || len(r.Header.Values("DPoP")) == 0 {
		return r, true
	}
	if g.name == grantRefresh {
		// Refresh families are not bound to a key here (decisions.md),
		// and a DPoP-bound token never comes with a refresh token.
		writeOAuthError(w, newError(http.StatusBadRequest, errInvalidDPoPProof, "refresh tokens of this server are not DPoP-bound; log in again"))
		return r, false
	}
	jkt, err := s.verifyDPoPProof(r, s.baseURL+"/oauth/token", "")
	if err != nil {
		writeOAuthError(w, newError(http.StatusBadRequest, errInvalidDPoPProof, "%s", err.Error()))
		return r, false
	}
	return withDPoPKey(r, jkt), true
}
