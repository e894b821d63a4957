package redact

import (
	"net/url"
	"strings"
	"testing"
)

// A redirect in a message keeps what it is about (error, state, the
// path) and loses the code or token it carries, in the query or fragment.
func TestElideGrants(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:1/cb?code=s3cr3t&state=x":         "http://127.0.0.1:1/cb?code=%E2%80%A6&state=x",
		"http://127.0.0.1:1/cb?error=access_denied&state=x": "http://127.0.0.1:1/cb?error=access_denied&state=x",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := ElideGrants(u); got != want {
			t.Errorf("ElideGrants(%s) = %s, want %s", in, got, want)
		}
	}
	u, err := url.Parse("http://127.0.0.1:1/cb#access_token=s3cr3t&token_type=Bearer")
	if err != nil {
		t.Fatal(err)
	}
	if got := ElideGrants(u); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "token_type=Bearer") {
		t.Errorf("ElideGrants(%s) = %s: want the token elided and token_type kept", u, got)
	}
}
