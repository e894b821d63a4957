package flows

import (
	"encoding/base64"
	"testing"
)

func TestAccountFromJWT(t *testing.T) {
	jwt := func(payload string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".sig"
	}
	for _, tc := range []struct{ token, want string }{
		{jwt(`{"sub":"u_1","email":"mona@example.com","preferred_username":"mona"}`), "mona"},
		{jwt(`{"sub":"u_1","email":"mona@example.com"}`), "mona@example.com"},
		{jwt(`{"sub":"u_1"}`), "u_1"},
		{jwt(`not json`), ""},
		{"mcpa_opaque", ""},
		{"a.%%%.c", ""},
	} {
		if got := accountFromJWT(tc.token); got != tc.want {
			t.Errorf("accountFromJWT(%q) = %q, want %q", tc.token, got, tc.want)
		}
	}
}
