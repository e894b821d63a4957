package conformance

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	cs := parseChallenges([]string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="mcp", error="invalid_token", error_description="a \"quoted\", text"`, `Basic realm=x`})
	if len(cs) != 2 || cs[0].Scheme != "Bearer" || cs[1].Params["realm"] != "x" {
		t.Fatalf("got %+v", cs)
	}
	want := map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "mcp",
		"error": "invalid_token", "error_description": `a "quoted", text`}
	for k, v := range want {
		if cs[0].Params[k] != v {
			t.Errorf("%s = %q, want %q", k, cs[0].Params[k], v)
		}
	}
	if c := parseChallenges([]string{"Bearer"}); len(c) != 1 || len(c[0].Params) != 0 {
		t.Errorf("bare scheme: %+v", c)
	}
}

func TestJWTHelpers(t *testing.T) {
	key := []byte("k")
	tok := signJWT(map[string]any{"alg": "HS256"}, map[string]any{"sub": "u", "exp": 5}, key)
	h, c, err := decodeJWT(tok)
	if err != nil || h["alg"] != "HS256" || c["sub"] != "u" {
		t.Fatalf("decode: %v %v %v", h, c, err)
	}
	if n, err := numClaim(c, "exp"); err != nil || n != 5 {
		t.Errorf("exp = %d, %v", n, err)
	}
	verify := func(tok string) bool {
		i := strings.LastIndexByte(tok, '.')
		sig, err := b64.DecodeString(tok[i+1:])
		m := hmac.New(sha256.New, key)
		m.Write([]byte(tok[:i]))
		return err == nil && hmac.Equal(sig, m.Sum(nil))
	}
	if !verify(tok) {
		t.Fatal("signJWT does not verify")
	}
	if bad := tamperSignature(tok); bad == tok || verify(bad) {
		t.Errorf("tampered signature still verifies")
	}
	if none := signJWT(map[string]any{"alg": "none"}, c, nil); !strings.HasSuffix(none, ".") {
		t.Errorf("alg none token %q should end with an empty signature", none)
	}
	if _, _, err := decodeJWT("a.b"); err == nil {
		t.Errorf("two-part token decoded")
	}
}
