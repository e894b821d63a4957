package browserurl

import (
	"net/url"
	"testing"
)

func TestResolveLikeABrowser(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/auth/callback")
	for ref, want := range map[string]string{
		"/\t/evil.example/x":  "http://evil.example/x",
		"/\\evil.example":     "http://evil.example",
		"\\\\evil.example/a":  "http://evil.example/a",
		"/\r\n/evil.example":  "http://evil.example",
		" /settings ":         "http://127.0.0.1:8080/settings",
		"/settings?x=1":       "http://127.0.0.1:8080/settings?x=1",
		"https://other.test/": "https://other.test/",
	} {
		got := Resolve(base, ref)
		if got == nil || got.String() != want {
			t.Errorf("Resolve(%q) = %v, want %s", ref, got, want)
		}
	}
	if !SameOrigin(base, Resolve(base, "/x")) || SameOrigin(base, Resolve(base, "//evil.example")) {
		t.Error("SameOrigin wrong")
	}
}
