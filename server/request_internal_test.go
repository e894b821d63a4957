package server

import (
	"maps"
	"net/url"
	"strings"
	"testing"
)

// The one-pass form parser answers as url.ParseQuery followed by
// singleValues did: the same pairs, or an error of the same kind.
func FuzzParseFormParams(f *testing.F) {
	for _, s := range []string{
		"", "&", "a", "a=", "=b", "a=1&b=2", "a=1&a=2", "a=1&a=1", "a=%zz", "%zz=1", "a=1;b=2", "a=1&&b=2",
		"grant_type=authorization_code&code=abc&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&client_id=c&code_verifier=v",
		"a=%ff", "a=%c3%a9", "a+b=c+d", "a=1&b=%zz&a=2", "a=1&a=2&b=%ff", "=0&=0", strings.Repeat("a&", maxFormParams),
		strings.Repeat("a&", maxFormParams-1) + "b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, gotErr := parseFormParams(body)
		vals, err := url.ParseQuery(body)
		var want map[string]string
		var wantErr *oauthError
		if err != nil {
			wantErr = invalidRequest("body is not valid form encoding")
		} else {
			want, wantErr = singleValues(vals)
		}
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
		case wantErr != nil && gotErr.Code != wantErr.Code:
			t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
		case wantErr != nil && strings.Contains(wantErr.Description, "form encoding") != strings.Contains(gotErr.Description, "form encoding"):
			t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
		case wantErr == nil && !maps.Equal(got, want):
			t.Fatalf("%q: %v, want %v", body, got, want)
		}
	})
}
