package conformance

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// sampleExchange is an exchange as the recorder keeps it: built from a real
// request and answer, so the redaction is the one a run applies.
func sampleExchange() Exchange {
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/oauth/token?code=secret-code-1&x=1", nil)
	req.Header.Set("Authorization", "Bearer secret-access-token")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := &Response{Status: 500, Header: http.Header{
		"Content-Type": {"application/json"}, "Set-Cookie": {"auth_token=secret-cookie"}, "X-Noise": {"dropped"},
	}, Body: []byte(`{"error":"server_error","refresh_token":"secret-refresh","note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"}`)}
	sent := []byte("grant_type=authorization_code&code=secret-code-2&code_verifier=secret-verifier&client_id=c1")
	run := &runState{secrets: &redact.Secrets{}}
	run.learn(req, sent, resp)
	var t transcript
	t.add(newRecord(req, sent, resp))
	return t.exchanges(run.secrets)[0]
}

// Secrets never reach a report: tokens, codes, verifiers and cookies are
// redacted in URLs, headers and bodies, and what explains the verdict
// stays.
func TestExchangeRedaction(t *testing.T) {
	x := sampleExchange()
	text := x.Text()
	for _, secret := range []string{"secret-", "eyJhbGci"} {
		if strings.Contains(text, secret) {
			t.Errorf("the transcript shows %q:\n%s", secret, text)
		}
	}
	for _, kept := range []string{"> POST https://mcp.example.com/oauth/token?", "x=1", "Authorization: Bearer [redacted 19 chars]", "client_id=c1",
		"grant_type=authorization_code", "< 500 Internal Server Error", `"error":"server_error"`, "Set-Cookie: auth_token=[redacted 13 chars]"} {
		if !strings.Contains(text, kept) {
			t.Errorf("the transcript lacks %q:\n%s", kept, text)
		}
	}
	if strings.Contains(text, "X-Noise") {
		t.Errorf("headers nobody needs are shown:\n%s", text)
	}
}
