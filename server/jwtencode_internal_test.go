package server

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// oddStrings are the values that take appendJSONString's slow path:
// quotes, backslashes, controls, HTML-escaped bytes, non-ASCII, invalid
// UTF-8 and the line separators encoding/json escapes.
var oddStrings = []string{"", "u_plain", `say "hi"`, `back\slash`, "tab\tnew\nline", "<script>&amp;", "ünïcödé ✓", "bad \xff utf8", "sep\u2028\u2029", "\x00\x1f\x7f"}

// The tokens signHS256 writes are the ones golang-jwt writes for the same
// claims, byte for byte, and golang-jwt's parser accepts them.
func TestSignHS256IsWhatGolangJWTWrites(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	iat := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	claimsFor := func(sub, iss, aud, jti, use, client string, nbf bool) accessClaims {
		c := accessClaims{jwt.RegisteredClaims{Subject: sub, Issuer: iss, ID: jti,
			IssuedAt: jwt.NewNumericDate(iat), ExpiresAt: jwt.NewNumericDate(iat.Add(AccessTokenLifetime))}, use, client, nil}
		if aud != "" {
			c.Audience = jwt.ClaimStrings{aud}
		}
		if nbf {
			c.NotBefore = jwt.NewNumericDate(iat)
		}
		return c
	}
	cases := []accessClaims{
		claimsFor("u_abc", "http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", "jti1", "", "c_1", false),
		claimsFor("u_abc", "https://auth.example.com", "https://auth.example.com/mcp", "jti2", tokenUseSession, "", false),
		claimsFor("u_abc", "", "", "", "", "", true), // every optional claim empty, nbf set
		{RegisteredClaims: jwt.RegisteredClaims{Audience: jwt.ClaimStrings{"a", "b<c"}}},
		{}, // nothing at all: {}
		{RegisteredClaims: jwt.RegisteredClaims{Subject: "ci-bot"}, Cnf: &confirmation{JKT: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}},
	}
	for _, s := range oddStrings {
		cases = append(cases, claimsFor(s, s, s, s, s, s, false))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		f := func() string {
			var b strings.Builder
			for range rng.IntN(12) {
				o := oddStrings[rng.IntN(len(oddStrings))]
				b.WriteString(o[:rng.IntN(len(o)+1)]) // a prefix: may split a rune
				b.WriteByte(byte(rng.IntN(256)))
			}
			return b.String()
		}
		cases = append(cases, claimsFor(f(), f(), f(), f(), f(), f(), rng.IntN(2) == 0))
	}
	for i, c := range cases {
		want, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := signHS256(&c, key)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("case %d (%+v):\n got %s\nwant %s", i, c, got, want)
		}
	}
	// And what the server signs passes its own verification.
	ts := benchTokens()
	tok, err := ts.issueForClient("u_x", "c_x", "jti-x", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.Verify(t.Context(), tok.Raw)
	if err != nil || got.Subject != "u_x" || got.ClientID != "c_x" || got.ID != "jti-x" {
		t.Fatalf("verify: %+v, %v", got, err)
	}
}
