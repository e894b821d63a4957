package pkce

import (
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

var verifierShape = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// FuzzPKCE differentially checks S256 against golang.org/x/oauth2 and the
// verifier rules against the RFC 7636 grammar.
func FuzzPKCE(f *testing.F) {
	f.Add("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	f.Add(strings.Repeat("~", 128))
	f.Add(strings.Repeat("a", 42))
	f.Add("é" + strings.Repeat("a", 43))
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := S256(v), oauth2.S256ChallengeFromVerifier(v); got != want {
			t.Fatalf("S256(%q) = %q, x/oauth2 says %q", v, got, want)
		}
		if ValidVerifier(v) != verifierShape.MatchString(v) {
			t.Fatalf("ValidVerifier(%q) = %v, grammar says %v", v, ValidVerifier(v), verifierShape.MatchString(v))
		}
		if Verify(v, S256(v)) != ValidVerifier(v) {
			t.Fatalf("Verify(%q, S256) = %v", v, Verify(v, S256(v)))
		}
		if Verify(v, v) && len(v) != 43 {
			t.Fatalf("plain challenge accepted for %q", v)
		}
	})
}
