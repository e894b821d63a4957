package approve

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the programs here are shell scripts")
	}
	path := filepath.Join(t.TempDir(), "driver.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// The browser command's contract, without a browser: the authorization
// URL is the last argument, the action is in the environment, and a
// program that stops at the redirect may print it as its last line; one
// that fails leaves its last words in the error.
func TestCommandApprover(t *testing.T) {
	printer := script(t, `for last; do :; done
state=$(printf '%s' "$last" | sed -n 's/.*[?&]state=\([^&]*\).*/\1/p')
echo "signing in…"
echo "http://127.0.0.1:43117/callback?code=c-$MCPAUTH_CONFORMANCE_ACTION&state=$state"
`)
	a, err := NewCommandApprover(printer + " --flag")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !strings.HasPrefix(a.RedirectURI(), "http://127.0.0.1:") {
		t.Errorf("redirect URI %s: want the loopback listener", a.RedirectURI())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authURL := "https://as.example/authorize?" + url.Values{"state": {"s1"}, "redirect_uri": {conformance.RedirectURI}}.Encode()
	for action, send := range map[string]func(context.Context, string) (*url.URL, error){"approve": a.ApproveConsent, "deny": a.DenyConsent} {
		u, err := send(ctx, authURL)
		if err != nil {
			t.Fatalf("%s: %v", action, err)
		}
		if q := u.Query(); q.Get("state") != "s1" || q.Get("code") != "c-"+action {
			t.Errorf("%s: got %s", action, u)
		}
	}

	failing, err := NewCommandApprover(script(t, "echo 'no form with a Sign in button' >&2\nexit 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer failing.Close()
	if _, err := failing.ApproveConsent(ctx, authURL); err == nil || !strings.Contains(err.Error(), "no form with a Sign in button") {
		t.Errorf("a failing program: %v, want its stderr in the error", err)
	}
	if err := failing.ApproveDevice(ctx, "https://as.example/device", "ABCD-EFGH"); err == nil || !strings.Contains(err.Error(), "skipped") {
		t.Errorf("device approval: %v, want a skip", err)
	}
}

// An authorization endpoint the server under test names, relative or of
// another scheme, never reaches the program: as flows builds the URL from
// it, "--output=…" would be the program's option and file: a file to open.
func TestCommandApproverRefusesUnlaunchableURLs(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	a, err := NewCommandApprover(script(t, "touch '"+marker+"'\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, endpoint := range []string{"--output=/tmp/stolen", "/oauth/authorize", "file:///etc/passwd", "javascript:alert(1)"} {
		req := flows.AuthRequest{Endpoint: endpoint, ClientID: "c1", RedirectURI: a.RedirectURI(), State: "s1"}
		if _, err := a.ApproveConsent(ctx, req.URL()); !errors.Is(err, oauthwire.ErrNotLaunchable) {
			t.Errorf("endpoint %s: %v, want ErrNotLaunchable", endpoint, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the browser command ran")
	}
}

// The redirect listener keeps what reaches it: a redirect for a waiting
// request at another path than /callback is handed to the check (MCP-48
// must see it), and one no request waits for (a fragment's error, which
// the browser does not send, leaves no state) is named in the reason.
func TestCommandApproverKeepsUnexpectedRedirects(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "done")
	a, err := NewCommandApprover(script(t, `while [ ! -e '`+flag+`' ]; do sleep 0.05; done
echo 'no consent page' >&2
exit 1
`))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	arrive := func(path string) {
		// The program waits until the "browser" has arrived.
		defer func() {
			if err := os.WriteFile(flag, nil, 0o600); err != nil {
				t.Error(err)
			}
		}()
		for ctx.Err() == nil {
			a.mu.Lock()
			n := len(a.waiting)
			a.mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		resp, err := http.Get(strings.TrimSuffix(a.RedirectURI(), "/callback") + path)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	authURL := func(state string) string {
		return "https://as.example/authorize?" + url.Values{"state": {state}, "redirect_uri": {a.RedirectURI() + "/extra"}}.Encode()
	}

	go arrive("/callback/extra?code=stolen&state=s-extra")
	u, err := a.ApproveConsent(ctx, authURL("s-extra"))
	if err != nil || u.Path != "/callback/extra" || u.Query().Get("state") != "s-extra" {
		t.Fatalf("a redirect to /callback/extra: %v, %v; want it handed to the check", u, err)
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	go arrive("/callback")
	_, err = a.ApproveConsent(ctx, authURL("s-lost"))
	if err == nil || !strings.Contains(err.Error(), "listener received, for no waiting request: GET http://127.0.0.1:") ||
		!strings.Contains(err.Error(), "/callback") || !strings.Contains(err.Error(), "no consent page") {
		t.Errorf("a redirect without state: %v; want it named in the error, with the program's last words", err)
	}
}
