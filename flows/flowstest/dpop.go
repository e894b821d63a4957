package flowstest

import (
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

// DPoP (RFC 9449) on the fake server, when Server.DPoP is set: the token
// endpoint requires a proof with every request (and, with DPoPNonce, the
// nonce first), tokens and refresh tokens are bound to the proof's key, a
// refresh needs a proof from the same key, and /api/ping and /mcp need
// "Authorization: DPoP" with a proof for the token (ath) and the request.

var errNeedNonce = errors.New("use_dpop_nonce")

// checkProof verifies a DPoP proof for (method, htu), for token when it is
// not empty, and returns its key's JWK thumbprint. Called under s.mu.
func (s *Server) checkProof(proof, method, htu, token string) (string, error) {
	if proof == "" {
		return "", errors.New("no DPoP proof")
	}
	var pub *ecdsa.PublicKey
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithTimeFunc(s.Clock.Now)).ParseWithClaims(proof, claims, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ is not dpop+jwt")
		}
		var err error
		pub, err = JWKPublicKey(t.Header["jwk"])
		return pub, err
	})
	if err != nil {
		return "", fmt.Errorf("DPoP proof: %w", err)
	}
	iat, _ := claims.GetIssuedAt()
	jti, _ := claims["jti"].(string)
	switch {
	case claims["htm"] != method || claims["htu"] != htu:
		return "", fmt.Errorf("DPoP proof for %v %v, want %s %s", claims["htm"], claims["htu"], method, htu)
	case iat == nil || iat.Sub(s.Clock.Now()).Abs() > time.Minute:
		return "", errors.New("DPoP proof iat missing or too far from now")
	case jti == "" || s.proofJTIs[jti]:
		return "", errors.New("DPoP proof jti missing or replayed")
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", errors.New("DPoP proof ath does not match the token")
		}
	}
	s.proofJTIs[jti] = true
	if token == "" && s.DPoPNonce != "" && claims["nonce"] != s.DPoPNonce {
		return "", errNeedNonce
	}
	s.ProofsChecked++
	return JWKThumbprint(pub), nil
}

// tokenProof checks the token endpoint's proof and answers the error when
// it fails; ok is false then.
func (s *Server) tokenProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	jkt, err := s.checkProof(r.Header.Get("DPoP"), http.MethodPost, s.URL+r.URL.Path, "")
	switch {
	case errors.Is(err, errNeedNonce):
		w.Header().Set("DPoP-Nonce", s.DPoPNonce)
		oauthError(w, 400, "use_dpop_nonce", "a DPoP nonce is required")
		return "", false
	case err != nil:
		oauthError(w, 400, "invalid_dpop_proof", err.Error())
		return "", false
	}
	return jkt, true
}

// JWKPublicKey reads a DPoP proof header's public P-256 JWK.
func JWKPublicKey(v any) (*ecdsa.PublicKey, error) {
	m, ok := v.(map[string]any)
	if !ok || m["kty"] != "EC" || m["crv"] != "P-256" || m["d"] != nil {
		return nil, errors.New("jwk is not a public P-256 key")
	}
	x, err1 := base64.RawURLEncoding.DecodeString(fmt.Sprint(m["x"]))
	y, err2 := base64.RawURLEncoding.DecodeString(fmt.Sprint(m["y"]))
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		return nil, errors.New("jwk coordinates")
	}
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}, nil
}

// JWKThumbprint is the RFC 7638 thumbprint of an EC key (a DPoP jkt).
func JWKThumbprint(k *ecdsa.PublicKey) string {
	b := func(i *big.Int) string { return base64.RawURLEncoding.EncodeToString(i.FillBytes(make([]byte, 32))) }
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + b(k.X) + `","y":"` + b(k.Y) + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
