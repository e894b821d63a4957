package redact

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestPrintableNeutralisesTerminalControl(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\nline two\tok":       "plain text\nline two\tok",
		"bad\x1b[2J\x1b]0;pwned\x07":     `bad\x1b[2J\x1b]0;pwned\x07`,
		"over\rwrite":                    `over\x0dwrite`,
		"c1\u009bcsi":                    `c1\x9bcsi`,
		"bidi \u202egnp.exe":             `bidi \u202egnp.exe`,
		"invalid \xff byte":              `invalid \ufffd byte`,
		"ünïcödé and emoji 🔑 stay as is": "ünïcödé and emoji 🔑 stay as is",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// A hostile server's body reaches the --debug trace as text, not as
// terminal commands.
func TestDebugTraceEscapesServerText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("{\"error\":\"invalid_request\",\"error_description\":\"\x1b[2K\\rall good\x1b]8;;http://127.0.0.1/\x07\"}"))
	}))
	defer srv.Close()
	var out bytes.Buffer
	hc := &http.Client{Transport: Trace(http.DefaultTransport, &out)}
	resp, err := hc.Get(srv.URL + "/oauth/token?code=secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.ContainsAny(out.String(), "\x1b\x07\r") {
		t.Fatalf("trace carries raw control characters: %q", out.String())
	}
	if !strings.Contains(out.String(), `\x1b[2K`) || strings.Contains(out.String(), "secret") {
		t.Fatalf("trace = %q, want the escape shown and the code redacted", out.String())
	}
}

// An event stream is passed on as it arrives, not read to its end first: a
// stream that stays open (the proxy's) would otherwise hold every event.
func TestDebugTraceDoesNotHoldAnEventStream(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: first\n\n"))
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	var out bytes.Buffer
	hc := &http.Client{Transport: Trace(http.DefaultTransport, &out)}
	resp, err := hc.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event: %q %v", line, err)
	}
	if !strings.Contains(out.String(), "(event stream: not traced)") {
		t.Errorf("trace = %q", out.String())
	}
}

func TestRedactBody(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1XzEifQ.c2lnbmF0dXJl"
	tests := []struct {
		in     string
		secret string
	}{
		{`{"access_token":"` + jwt + `","token_type":"Bearer"}`, jwt},
		{`{"device_code": "dc-0123456789abcdef", "user_code":"ABCD-1234"}`, "dc-0123456789abcdef"},
		{`{"refresh_token":"r\"efresh-secret"}`, `efresh-secret`},
		{`grant_type=authorization_code&code=the-auth-code&code_verifier=the-verifier-0123456789&client_id=c1`, "the-auth-code"},
		{`grant_type=authorization_code&code=the-auth-code&code_verifier=the-verifier-0123456789&client_id=c1`, "the-verifier-0123456789"},
		{`client_id=c1&client_secret=s3cr3t`, "s3cr3t"},
		{`{"api_key":"k-1"}`, "k-1"},
		{`the key is mcpa_0123456789abcdefABCDEF and more`, "mcpa_0123456789abcdefABCDEF"},
		{`Get "http://127.0.0.1:1/cb?state=st-1&code=c-1": connection refused`, "c-1"},
		{`Get "http://127.0.0.1:1/cb?state=st-1&code=c-1": connection refused`, "st-1"},
		{`{"id_token":"` + jwt + `"}`, jwt},
	}
	for _, tt := range tests {
		got := RedactBody(tt.in)
		if strings.Contains(got, tt.secret) || !strings.Contains(got, "[REDACTED]") {
			t.Errorf("RedactBody(%s) = %s: %q still there", tt.in, got, tt.secret)
		}
	}
	// Ordinary fields survive, so the trace is still useful.
	if got := RedactBody(`grant_type=authorization_code&code_challenge_method=S256&client_id=c1`); got != `grant_type=authorization_code&code_challenge_method=S256&client_id=c1` {
		t.Errorf("over-redacted: %s", got)
	}
	u, _ := url.Parse("http://127.0.0.1:5/callback?code=abc&state=xyz&iss=http%3A%2F%2Fas")
	if got := RedactURL(u); strings.Contains(got, "abc") || strings.Contains(got, "xyz") || !strings.Contains(got, "iss=") {
		t.Errorf("RedactURL = %s", got)
	}
}

func TestRedactHeader(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"Authorization", "Bearer abc.def.ghi", "Bearer [REDACTED]"},
		{"authorization", "Basic dXNlcjpwYXNz", "Basic [REDACTED]"},
		{"Cookie", "auth_token=abc", "[REDACTED]"},
		{"Set-Cookie", "auth_token=abc; HttpOnly", "[REDACTED]"},
		{"Location", "http://127.0.0.1:5/callback?code=abc&state=s", "http://127.0.0.1:5/callback?code=[REDACTED]&state=[REDACTED]"},
		{"Content-Type", "application/json", "application/json"},
	} {
		if got := redactHeader(tt.name, tt.value); got != tt.want {
			t.Errorf("redactHeader(%s, %s) = %s, want %s", tt.name, tt.value, got, tt.want)
		}
	}
}
