package redact

import (
	"net/http"
	"strings"
	"testing"
)

// What the run learnt is masked wherever it appears; what is a secret by
// name is masked where it is, however short; error names and codes stay.
func TestSecretsLearnAndMask(t *testing.T) {
	var s Secrets
	s.LearnBody([]byte("{\n  \"grant\": {\"issued\": [{\"access_token\": \"nested-token-1\"}]},\n  \"payload\": \"{\\\"refresh_token\\\":\\\"quoted-refresh-1\\\"}\"\n}"))
	s.LearnBody([]byte("access_token=form-token-1&token_type=bearer"))
	s.LearnHeader(http.Header{"Authorization": {"Basic Y2xpZW50OmNsaWVudC1zZWNyZXQtMQ=="}, "Set-Cookie": {"auth_token=cookie-value-1; HttpOnly"},
		"Location": {"http://127.0.0.1:1/cb?code=auth-code-1&state=st"}})
	s.Add("short")
	text := s.Mask(`got nested-token-1, quoted-refresh-1, form-token-1 in /x/client-secret-1 with cookie-value-1 and auth-code-1; ` +
		`{"error":"invalid_grant","code":-32600,"id_token":"abc"} code=xyz short`)
	for _, secret := range []string{"nested-token-1", "quoted-refresh-1", "form-token-1", "client-secret-1", "cookie-value-1", "auth-code-1", `"abc"`, "xyz"} {
		if strings.Contains(text, secret) {
			t.Errorf("%q shown: %s", secret, text)
		}
	}
	for _, kept := range []string{`"error":"invalid_grant"`, `"code":-32600`, "[redacted 14 chars]", "code=[redacted 3 chars]", "short"} {
		if !strings.Contains(text, kept) {
			t.Errorf("%q lost: %s", kept, text)
		}
	}
	if got := s.Mask(text); got != text {
		t.Errorf("masking twice changed the text:\n%s\n%s", text, got)
	}
	var none *Secrets
	if got := none.Mask(`{"access_token":"x"}`); got != `{"access_token":"[redacted 1 chars]"}` {
		t.Errorf("a nil Secrets: %s", got)
	}
}
