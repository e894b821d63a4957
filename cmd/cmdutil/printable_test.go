package cmdutil

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
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
	hc := &http.Client{Transport: &debugTransport{next: http.DefaultTransport, out: &out}}
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
	hc := &http.Client{Transport: &debugTransport{next: http.DefaultTransport, out: &out}}
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
