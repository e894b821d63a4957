package conformance

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The suite crafts and inspects JWTs by hand: it never verifies the server's
// signatures (it does not know the key), it only builds tokens the server must
// refuse and reads the claims of tokens it was given.

var b64 = base64.RawURLEncoding

// decodeJWT returns the header and claims of a compact JWS, unverified.
func decodeJWT(tok string) (header, claims map[string]any, err error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("not a JWT: %d dot-separated parts, want 3", len(parts))
	}
	dec := func(s string) (map[string]any, error) {
		b, err := b64.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("not base64url: %w", err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		return m, nil
	}
	if header, err = dec(parts[0]); err != nil {
		return nil, nil, fmt.Errorf("JWT header: %w", err)
	}
	if claims, err = dec(parts[1]); err != nil {
		return nil, nil, fmt.Errorf("JWT claims: %w", err)
	}
	return header, claims, nil
}

func encodePart(m map[string]any) string {
	b, _ := json.Marshal(m) // maps of JSON values always marshal
	return b64.EncodeToString(b)
}

// signHS256 builds a JWT signed with key; alg "none" gives an empty signature.
func signJWT(header, claims map[string]any, key []byte) string {
	signing := encodePart(header) + "." + encodePart(claims)
	if header["alg"] == "none" {
		return signing + "."
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signing))
	return signing + "." + b64.EncodeToString(mac.Sum(nil))
}

// tamperSignature changes one character in the middle of the signature. The
// middle, not the end: the last character of an unpadded base64url signature
// carries padding bits that lenient decoders ignore.
func tamperSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.')
	sig := []byte(tok[i+1:])
	if len(sig) == 0 {
		return tok + "AAAA"
	}
	j := len(sig) / 2
	if sig[j] == 'A' {
		sig[j] = 'B'
	} else {
		sig[j] = 'A'
	}
	return tok[:i+1] + string(sig)
}

// replaceClaims swaps the payload of tok, keeping its header and signature.
func replaceClaims(tok string, claims map[string]any) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return tok
	}
	return parts[0] + "." + encodePart(claims) + "." + parts[2]
}

// wantFilledClaim checks claim k is a non-empty string.
func wantFilledClaim(claims map[string]any, k string) error {
	if s, _ := claims[k].(string); s == "" {
		return Fail("claim %s: want a non-empty string, got %v", k, claims[k])
	}
	return nil
}

// numClaim reads a numeric claim.
func numClaim(claims map[string]any, k string) (int64, error) {
	n, ok := claims[k].(json.Number)
	if !ok {
		return 0, Fail("claim %q: want a number, got %v", k, claims[k])
	}
	v, err := n.Int64()
	if err != nil {
		return 0, Fail("claim %q: want an integer NumericDate, got %s", k, n)
	}
	return v, nil
}
