package creds

import (
	"encoding/base64"
	"testing"
)

func TestSubject(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, tt := range []struct{ token, want string }{
		{enc([]byte(`{"alg":"HS256"}`)) + "." + enc([]byte(`{"sub":"u_1","exp":1}`)) + ".sig", "u_1"},
		{"mcpa_opaque", ""},
		{"a.!!!.c", ""},
		{"a." + enc([]byte(`[1]`)) + ".c", ""},
	} {
		if got := Subject(tt.token); got != tt.want {
			t.Errorf("Subject(%s) = %q, want %q", tt.token, got, tt.want)
		}
	}
}
