package root_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/redact"
)

// hostileText is what a hostile server writes into every text it controls:
// a window title (OSC 0), a clipboard write (OSC 52), a screen clear, hidden
// text (SGR 8), a C1 CSI, a bell, a carriage return that forges the start
// of the line, and a right-to-left override.
const hostileText = "\x1b]0;pwned\x07" + "\x1b]52;c;cm0gLXJmIH4K\x07" + "\x1b[2J" + "\x1b[8mhidden\x1b[0m" +
	"\u009b31m" + "\a" + "\rforged" + "\u202egnp.exe"

// longName makes a name no screen should show whole.
var longName = strings.Repeat("n", 5000)

// rawControls counts what would drive a terminal in out: control
// characters (C0 but newline and tab, DEL, C1) and invisible format
// characters (bidi overrides).
func rawControls(out string) int {
	n := 0
	for _, r := range out {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			n++
		}
	}
	return n
}

// hostile is a flowstest server whose every text is hostile: its scopes,
// its user's name in the ID token, its MCP serverInfo.name, its device
// codes and URIs, and its error descriptions. With ping, /api/ping names
// the user (hostile id and name) instead of answering 404, or, once
// failPing is set, answers with a hostile error; hostileToken makes the
// access tokens themselves hostile.
type hostile struct {
	*flowstest.Server
	failPing     atomic.Bool
	hostileToken bool
}

func hostileServer(t *testing.T, ping, hostileToken bool) *hostile {
	s := flowstest.NewServer(t)
	h := &hostile{Server: s, hostileToken: hostileToken}
	s.PRMScopes = []string{"mcp", "x" + hostileText}
	s.ScopesSupported = []string{"mcp", "offline_access", "x" + hostileText}
	s.IDTokenClaims = map[string]any{"sub": "u1", "name": hostileText}
	s.NoPing = !ping
	srv := mcp.NewServer(&mcp.Implementation{Name: hostileText, Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: hostileText}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	s.MCPHandler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	inner := s.Config.Handler
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/.well-known/oauth-authorization-server":
			// The metadata, with a device endpoint added.
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var md map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &md)
			md["device_authorization_endpoint"] = s.URL + "/oauth/device"
			writeJSON(w, 200, md)
		case r.URL.Path == "/oauth/device":
			writeJSON(w, 200, map[string]any{"device_code": "dc", "user_code": "CODE" + hostileText,
				"verification_uri": s.URL + "/device#" + hostileText, "verification_uri_complete": s.URL + "/device?c=" + hostileText,
				"expires_in": 600, "interval": 1})
		case r.URL.Path == "/oauth/token" && r.FormValue("grant_type") == "urn:ietf:params:oauth:grant-type:device_code":
			writeJSON(w, 400, map[string]any{"error": "access_denied", "error_description": hostileText})
		case r.URL.Path == "/api/ping" && ping && r.Header.Get("Authorization") != "":
			if h.failPing.Load() {
				writeJSON(w, 400, map[string]any{"error": "invalid_request", "error_description": hostileText})
				return
			}
			writeJSON(w, 200, map[string]any{"status": "ok", "user_id": "u_" + hostileText, "name": hostileText + longName})
		case r.URL.Path == "/oauth/token" && h.hostileToken:
			// The token response, with an access token no server may issue.
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var tok map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &tok)
			if tok["access_token"] != nil {
				tok["access_token"] = "at" + hostileText
			}
			writeJSON(w, rec.Code, tok)
		default:
			inner.ServeHTTP(w, r)
		}
	})
	return h
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Every command that shows what a server or a token said escapes it: not
// one raw control character reaches stdout or stderr, whether the text
// comes straight from the server or from storage (status), and --output
// json stays JSON that decodes to the server's words.
func TestHostileServerTextNeverReachesTheTerminalRaw(t *testing.T) {
	oidc := hostileServer(t, false, false) // names the user in its ID token; MCP tools/list
	api := hostileServer(t, true, false)   // names the user at /api/ping
	badToken := hostileServer(t, false, true)
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	type run struct {
		name string
		args []string
	}
	runs := []run{
		{"discover", []string{"discover", oidc.URL + "/mcp"}},
		{"discover json", []string{"discover", oidc.URL + "/mcp", "-o", "json"}},
		{"login (ID token)", []string{"login", oidc.URL + "/mcp"}},
		{"login (api/ping)", []string{"login", api.URL + "/mcp", "--account", "api"}},
		{"login json", []string{"login", api.URL + "/mcp", "--account", "api", "-o", "json"}},
		{"ping (MCP)", []string{"ping", oidc.URL + "/mcp"}},
		{"ping (MCP) json", []string{"ping", oidc.URL + "/mcp", "-o", "json"}},
		{"ping (api/ping)", []string{"ping", api.URL + "/mcp", "--account", "api"}},
		{"ping (api/ping) json", []string{"ping", api.URL + "/mcp", "--account", "api", "-o", "json"}},
		{"ping (error)", []string{"ping", api.URL + "/mcp", "--account", "api"}},
		{"login (hostile token)", []string{"login", badToken.URL + "/mcp", "--account", "tok"}},
		{"token", []string{"token", badToken.URL + "/mcp", "--account", "tok"}},
		{"token --header", []string{"token", badToken.URL + "/mcp", "--account", "tok", "--header"}},
		{"doctor", []string{"doctor", oidc.URL + "/mcp"}},
		{"device", []string{"device", oidc.URL + "/mcp", "--account", "device"}},
		{"status", []string{"status"}},
		{"status json", []string{"status", "-o", "json"}},
		{"logout", []string{"logout", badToken.URL + "/mcp", "--account", "tok"}},
	}
	total := 0
	for _, r := range runs {
		if r.name == "ping (error)" {
			api.failPing.Store(true)
		}
		if r.name == "device" {
			c.Clock = flowstest.NewAutoClock(time.Now()) // poll at once
		}
		code, stdout, stderr := c.Run(r.args...)
		n := rawControls(stdout) + rawControls(stderr)
		total += n
		t.Logf("%-22s exit %d, %d raw control characters", r.name, code, n)
		if n != 0 {
			t.Errorf("%s: %d raw control characters:\nstdout %q\nstderr %q", r.name, n, stdout, stderr)
		}
		if strings.HasSuffix(r.name, "json") && !json.Valid([]byte(stdout)) {
			t.Errorf("%s: stdout is not JSON: %q", r.name, stdout)
		}
		if !strings.HasSuffix(r.name, "json") && strings.Contains(stdout+stderr, longName[:redact.MaxField]) {
			t.Errorf("%s: a value longer than %d runes printed whole:\n%s%s", r.name, redact.MaxField, stdout, stderr)
		}
		// The token response's syntax check refuses the hostile token
		// at login, so nothing is stored; were one stored, token refuses
		// to print it. Either way nothing reaches stdout.
		if r.name == "login (hostile token)" && (code == 0 || !strings.Contains(stderr, "no Authorization header may carry")) {
			t.Errorf("%s: the hostile access token was accepted: exit %d, stderr %q", r.name, code, stderr)
		}
		if strings.HasPrefix(r.name, "token") && (code == 0 || stdout != "") {
			t.Errorf("%s: a hostile access token was printed: exit %d, stdout %q, stderr %q", r.name, code, stdout, stderr)
		}
	}
	t.Logf("total: %d raw control characters", total)

	// Escaped and cut, not dropped: status shows the stored names as
	// escapes, the long one ending in "…", and its JSON decodes to the very
	// text the server sent.
	_, stdout, _ := c.Run("status")
	if !strings.Contains(stdout, `\x1b]0;pwned\x07`) || !strings.Contains(stdout, `\u202e`) || !strings.Contains(stdout, "n…") {
		t.Errorf("status does not show the stored names escaped and cut:\n%s", stdout)
	}
	_, stdout, _ = c.Run("status", "-o", "json")
	var entries []struct{ Name string }
	if err := json.Unmarshal([]byte(stdout), &entries); err != nil || !slices.ContainsFunc(entries, func(e struct{ Name string }) bool { return e.Name == hostileText }) {
		t.Errorf("status -o json: %v %+v", err, entries)
	}
}
