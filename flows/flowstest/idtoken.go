package flowstest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OpenID Connect on the fake server, when Server.IDTokenClaims is set: the
// metadata names a jwks_uri, and every token response to the code grant
// carries an ID token signed with the server's key (or, with ForgeIDToken,
// with a key it does not publish) for the client, with these claims.

// idKeys are the published key and a forger's.
type idKeys struct{ published, forger *rsa.PrivateKey }

func newIDKeys() (*idKeys, error) {
	a, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	b, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &idKeys{published: a, forger: b}, nil
}

// keys makes the keys on first use.
func (s *Server) keys() *idKeys {
	s.idOnce.Do(func() {
		k, err := newIDKeys()
		if err != nil {
			s.errorf("making ID token keys: %v", err)
		}
		s.idKeys = k
	})
	return s.idKeys
}

func (s *Server) serveJWKS(w http.ResponseWriter) {
	k := s.keys().published
	b64 := base64.RawURLEncoding.EncodeToString
	writeJSON(w, 200, map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "id-1", "alg": "RS256", "use": "sig",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}})
}

// idToken signs an ID token for clientID. Called under s.mu.
func (s *Server) idToken(clientID string) string {
	now := s.Clock.Now()
	c := jwt.MapClaims{"iss": s.issuer(), "aud": clientID, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range s.IDTokenClaims {
		c[k] = v
	}
	j := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	j.Header["kid"] = "id-1"
	key := s.keys().published
	if s.ForgeIDToken {
		key = s.keys().forger
	}
	signed, err := j.SignedString(key)
	if err != nil {
		s.errorf("signing the ID token: %v", err)
	}
	return signed
}
