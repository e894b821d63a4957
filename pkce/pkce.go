// Package pkce implements RFC 7636 Proof Key for Code Exchange with the S256
// method, the only one mcpauth speaks. Both the client flows and the reference
// server use it, so the two sides agree on what a well-formed verifier is.
package pkce

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
)

// RFC 7636 §4.1: a verifier is 43 to 128 characters of the unreserved set.
const (
	MinVerifierLen = 43
	MaxVerifierLen = 128
)

// MethodS256 is the only code_challenge_method mcpauth accepts.
const MethodS256 = "S256"

// NewVerifier returns a fresh verifier of 43 characters built from 32 random
// bytes (256 bits), as RFC 7636 §7.1 recommends.
func NewVerifier() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pkce: reading random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// S256 returns BASE64URL(SHA256(verifier)) without padding (RFC 7636 §4.2).
func S256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidVerifier reports whether v has the length and alphabet RFC 7636 §4.1
// requires: [A-Za-z0-9-._~]{43,128}.
func ValidVerifier(v string) bool {
	if len(v) < MinVerifierLen || len(v) > MaxVerifierLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !unreserved(v[i]) {
			return false
		}
	}
	return true
}

// ValidChallenge reports whether c could be an S256 challenge: exactly 43
// characters of the base64url alphabet (a SHA-256 digest, unpadded).
func ValidChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(isAlnum(ch) || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

// Verify reports whether verifier is well formed and hashes to challenge.
// The comparison runs in constant time.
func Verify(verifier, challenge string) bool {
	if !ValidVerifier(verifier) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(S256(verifier)), []byte(challenge)) == 1
}

func unreserved(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
