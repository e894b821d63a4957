package conformance

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
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
	authURL := "https://as.example/authorize?" + url.Values{"state": {"s1"}, "redirect_uri": {loopbackRedirect}}.Encode()
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
		if _, err := a.ApproveConsent(ctx, req.URL()); !errors.Is(err, flows.ErrNotLaunchable) {
			t.Errorf("endpoint %s: %v, want ErrNotLaunchable", endpoint, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the browser command ran")
	}
}
