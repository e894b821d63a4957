package device_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// hostileDeviceServer is an MCP server and its authorization server on one
// loopback origin whose device authorization names verificationURI; its
// token endpoint never approves.
func hostileDeviceServer(t *testing.T, verificationURI string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize",
			"token_endpoint": srv.URL + "/token", "device_authorization_endpoint": srv.URL + "/device",
			"code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /device", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"device_code": "dc", "user_code": "WXYZ-0000",
			"verification_uri": verificationURI, "expires_in": 60, "interval": 5})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "authorization_pending"})
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A verification_uri the CLI must not hand to the browser program: a file
// to open, a script to run, an option, a path. Enter is pressed at once;
// the program (--browser-command, which logs its arguments) is never run,
// and the CLI says why while the box still shows the URI.
func TestDeviceRefusesToOpenAHostileVerificationURI(t *testing.T) {
	for _, uri := range []string{"file:///etc/passwd", "javascript:alert(document.cookie)", "--renderer-cmd-prefix=/tmp/evil", "/device/relative", "http://192.0.2.1/device"} {
		t.Run(uri, func(t *testing.T) {
			srv := hostileDeviceServer(t, uri)
			browser, recorded := clitest.RecordingBrowser(t)
			c := clitest.New(t, nil)
			c.TTY, c.Stdin = true, "\n"
			clk := flowstest.NewFakeClock(servertest.Start)
			c.Clock = clk
			out, errOut := &clitest.Buffer{}, &clitest.Buffer{}
			done := make(chan int, 1)
			go func() {
				done <- c.RunWith(out, errOut, "device", srv.URL+"/mcp", "--client-id", "c1", "--browser-command", browser)
			}()
			// Either the refusal is printed or the program ran: whichever
			// comes first decides.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(errOut.String(), "not offering to open the browser") && time.Now().Before(deadline) {
				if recorded() != "" {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := clk.BlockUntil(ctx, 1); err != nil {
				t.Fatalf("the CLI is not polling: %v\n%s", err, errOut.String())
			}
			clk.Advance(time.Hour)
			if code := <-done; code != clierr.ExitExpired {
				t.Fatalf("exit %d, want %d (expired):\n%s", code, clierr.ExitExpired, errOut.String())
			}
			time.Sleep(100 * time.Millisecond) // a program started late still writes
			if got := recorded(); got != "" {
				t.Fatalf("the browser program ran with %q", got)
			}
			s := errOut.String()
			if !strings.Contains(s, "Open:  "+uri) || !strings.Contains(s, "not offering to open the browser") || strings.Contains(s, "Press Enter") {
				t.Fatalf("want the URI in the box and the reason it is not opened, no Enter prompt:\n%s", s)
			}
		})
	}
}
