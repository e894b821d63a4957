package pkce

import (
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestS256MatchesRFC7636AppendixB(t *testing.T) {
	// The worked example of RFC 7636 Appendix B.
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const want = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if got := S256(verifier); got != want {
		t.Fatalf("S256 = %q, want %q", got, want)
	}
	if !Verify(verifier, want) {
		t.Fatal("Verify rejected the RFC example")
	}
}

func TestNewVerifierIsValidAndAgreesWithXOAuth2(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		v, err := NewVerifier()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidVerifier(v) {
			t.Fatalf("NewVerifier produced invalid verifier %q", v)
		}
		if seen[v] {
			t.Fatalf("NewVerifier repeated %q", v)
		}
		seen[v] = true
		if got, want := S256(v), oauth2.S256ChallengeFromVerifier(v); got != want {
			t.Fatalf("S256(%q) = %q, x/oauth2 says %q", v, got, want)
		}
		if !ValidChallenge(S256(v)) {
			t.Fatalf("ValidChallenge rejected S256 output %q", S256(v))
		}
	}
}

func TestValidVerifier(t *testing.T) {
	tests := []struct {
		name string
		v    string
		want bool
	}{
		{"min length", strings.Repeat("a", 43), true},
		{"max length", strings.Repeat("Z", 128), true},
		{"all unreserved", "abcXYZ019-._~" + strings.Repeat("0", 30), true},
		{"too short", strings.Repeat("a", 42), false},
		{"too long", strings.Repeat("a", 129), false},
		{"plus sign", strings.Repeat("a", 42) + "+", false},
		{"slash", strings.Repeat("a", 42) + "/", false},
		{"space", strings.Repeat("a", 42) + " ", false},
		{"non-ascii", strings.Repeat("a", 41) + "é", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidVerifier(tt.v); got != tt.want {
				t.Fatalf("ValidVerifier(%q) = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	v, _ := NewVerifier()
	c := S256(v)
	if Verify(v+"x", c) {
		t.Fatal("accepted a different verifier")
	}
	if Verify(v, c[:42]+"A") && c[42] != 'A' {
		t.Fatal("accepted a different challenge")
	}
	if Verify("short", S256("short")) {
		t.Fatal("accepted a malformed verifier whose hash matches")
	}
	if Verify(v, v) {
		t.Fatal("accepted plain method (challenge == verifier)")
	}
}
