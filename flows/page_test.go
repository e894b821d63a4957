package flows

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
)

// The loopback page's only style is allowed by its hash: a page whose
// <style> drifted from the hash in its CSP would show unstyled.
func TestPageStyleMatchesCSP(t *testing.T) {
	for _, p := range []page{
		{Status: 200, OK: true, Title: "Signed in", Message: "ok"},
		{Status: 400, Title: "Sign-in failed", Message: "no", Code: "access_denied", Detail: "the user cancelled"},
	} {
		rec := httptest.NewRecorder()
		writePage(rec, p)
		body := rec.Body.String()
		start, end := strings.Index(body, "<style>"), strings.Index(body, "</style>")
		if start < 0 || end < start {
			t.Fatalf("no <style> in %s", body)
		}
		sum := sha256.Sum256([]byte(body[start+len("<style>") : end]))
		want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, want) || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
			t.Fatalf("CSP %q; want only %s for styles and no scripts", csp, want)
		}
		if p.Code == "access_denied" && !strings.Contains(body, "You cancelled") {
			t.Fatalf("access_denied page does not say the sign-in was cancelled: %s", body)
		}
	}
}
