package flows_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/probe"
)

// The identity a login shows comes from an ID token only once its
// signature (the issuer's JWKS), iss, aud and exp check out: with and
// without name/email, and never from a forged or misdirected token.
func TestLoginIdentityFromIDToken(t *testing.T) {
	key := testRSAKey(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	srv, mux := newServer(t)
	b64 := base64.RawURLEncoding.EncodeToString
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	})
	disc := &flows.Discovery{Issuer: srv.URL, AuthServer: &flows.AuthServerMetadata{Issuer: srv.URL, JWKSURI: srv.URL + "/jwks"}}
	clk := flowstest.NewFakeClock(t0)
	sign := func(k *rsa.PrivateKey, mod func(jwt.MapClaims)) string {
		c := jwt.MapClaims{"iss": srv.URL, "aud": "cli", "sub": "8f3a9c", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
		mod(c)
		j := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		j.Header["kid"] = "k1"
		s, err := j.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name    string
		key     *rsa.PrivateKey
		mod     func(jwt.MapClaims)
		display string // "" with ok: verified without a name; "-" : refused
	}{
		{"name", key, func(c jwt.MapClaims) { c["name"], c["email"] = "Mona Lisa", "mona@example.com" }, "Mona Lisa"},
		{"preferred_username", key, func(c jwt.MapClaims) { c["preferred_username"], c["email"] = "mona", "mona@example.com" }, "mona"},
		{"email only", key, func(c jwt.MapClaims) { c["email"] = "mona@example.com" }, "mona@example.com"},
		{"sub only", key, func(jwt.MapClaims) {}, ""},
		{"forged signature", other, func(c jwt.MapClaims) { c["name"] = "Admin" }, "-"},
		{"wrong aud", key, func(c jwt.MapClaims) { c["name"], c["aud"] = "Admin", "another-client" }, "-"},
		{"wrong iss", key, func(c jwt.MapClaims) { c["name"], c["iss"] = "Admin", "https://evil.example" }, "-"},
		{"expired", key, func(c jwt.MapClaims) { c["name"], c["exp"] = "Admin", t0.Add(-time.Minute).Unix() }, "-"},
	} {
		id, err := probe.LoginIdentity(context.Background(), nil, clk, disc, "cli", &flows.Token{IDToken: sign(c.key, c.mod)})
		switch {
		case c.display == "-":
			if err == nil || id.Display() != "" || id.Subject != "" {
				t.Errorf("%s: read as %+v (%v)", c.name, id, err)
			}
		case err != nil || id.Display() != c.display || id.Subject != "8f3a9c":
			t.Errorf("%s: %+v %v, want %q", c.name, id, err, c.display)
		}
	}
	if _, err := probe.LoginIdentity(context.Background(), nil, clk, disc, "cli", &flows.Token{}); err != probe.ErrNoIDToken {
		t.Errorf("no ID token: %v", err)
	}
}
