package flows

import "testing"

// The ath claim of a proof is base64url(SHA-256(token)), unpadded (RFC
// 9449 §4.2): the value for "abc" is SHA-256's test vector so encoded.
func TestAccessTokenHash(t *testing.T) {
	if got := accessTokenHash("abc"); got != "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0" {
		t.Errorf("ath(abc) = %s", got)
	}
}
