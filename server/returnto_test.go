package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/mcpauth/mcpauth/internal/browserurl"
)

// locationAfterSignIn is what the callback sends: safeReturnTo's answer
// through http.Redirect, which cleans the path.
func locationAfterSignIn(base *url.URL, returnTo string) string {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/auth/callback?code=x&state=y", nil)
	http.Redirect(rec, req, safeReturnTo(base, returnTo), http.StatusFound)
	return rec.Header().Get("Location")
}

// The known bypasses, as the query parameter arrives after one decoding.
var hostileReturnTo = []string{
	"/\t/evil.example/x",  // return_to=/%09/evil.example/x
	"///evil.example",     // /%2F%2Fevil.example
	"/\\evil.example",     // /\evil
	"/%5Cevil.example",    // double-encoded backslash
	"/\r\n//evil.example", // /%0D%0A//evil
	"/.//evil.example",    // /.%2F/evil
	"///evil.example",     // ///evil
	"/\t\t/evil.example",  // /%09%09/evil
	"http:evil.example",   // scheme-relative to the base scheme
	"/\t\\\\evil.example", // /\t\\evil
	"/\u2215evil.example", // DIVISION SLASH look-alike
	"/\uff0fevil.example", // FULLWIDTH SOLIDUS look-alike
	"//evil.example",
	"https://evil.example/",
	"/%09/evil.example",
	"/%2509/evil.example",
	"/%252F%252Fevil.example",
	"\t//evil.example",
	" /x",
	"javascript:alert(1)",
	"/x\x00",
	"",
	"relative/path",
}

func TestSafeReturnToRefusesBypasses(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080")
	for _, v := range hostileReturnTo {
		if got := safeReturnTo(base, v); got != "/" {
			t.Errorf("safeReturnTo(%q) = %q, want /", v, got)
		}
	}
}

func TestSafeReturnToKeepsOwnPaths(t *testing.T) {
	base, _ := url.Parse("https://mcp.example.com")
	for _, v := range []string{
		"/",
		"/settings",
		"/settings?regenerated=1",
		"/auth/device?user_code=ABCD-1234",
		// What requireSession sends for a consent request: RequestURI, escaped.
		"/oauth/authorize?client_id=c_1&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&state=a%2Fb&code_challenge=x",
	} {
		if got := safeReturnTo(base, v); got != v {
			t.Errorf("safeReturnTo(%q) = %q, want it kept", v, got)
		}
	}
}

// FuzzReturnTo: whatever return_to an attacker sends, the browser that
// follows the callback's Location stays on our origin. The oracle is
// browserurl.Resolve, a model of the browser independent of safeReturnTo.
func FuzzReturnTo(f *testing.F) {
	for _, v := range hostileReturnTo {
		f.Add(v)
	}
	f.Add("/oauth/authorize?client_id=c&state=%2F%2F")
	f.Add("/settings")
	bases := []string{"http://127.0.0.1:8080", "https://mcp.example.com", "https://mcp.example.com:8443/prefix"}
	f.Fuzz(func(t *testing.T, v string) {
		for _, b := range bases {
			base, _ := url.Parse(b)
			loc := locationAfterSignIn(base, v)
			got := browserurl.Resolve(base, loc)
			if !browserurl.SameOrigin(base, got) {
				t.Fatalf("return_to %q: Location %q takes the browser to %v, off %s", v, loc, got, b)
			}
		}
	})
}
