package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
	"github.com/mcpauth/mcpauth/keyring"
)

// These checks read only the environment and files, so they run on
// injected variables; none of them connects anywhere.
func opts(vars map[string]string, onPath ...string) *Options {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.New(ios, func(k string) string { return vars[k] })
	return &Options{F: f, IO: ios, Getenv: f.Getenv, GOOS: "linux", LookPath: func(name string) (string, error) {
		for _, p := range onPath {
			if p == name {
				return "/usr/bin/" + name, nil
			}
		}
		return "", errors.New("not found")
	}}
}

func TestProxyCheckNamesTheRouteAndHidesThePassword(t *testing.T) {
	o := opts(map[string]string{"HTTPS_PROXY": "http://joe:s3cret@proxy.example:3128", "NO_PROXY": "internal.example"})
	c := proxyCheck(o, "https://mcp.example.com/mcp")
	if c.Status != Pass || !strings.Contains(c.Detail, "mcp.example.com goes through the proxy http://joe:xxxxx@proxy.example:3128") || strings.Contains(c.Detail, "s3cret") {
		t.Fatalf("proxied: %+v", c)
	}
	if c := proxyCheck(o, "https://internal.example/mcp"); !strings.Contains(c.Detail, "internal.example is reached directly") {
		t.Fatalf("NO_PROXY host: %+v", c)
	}
}

func TestCACheck(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tt := range []struct {
		name   string
		vars   map[string]string
		caFile string
		status Status
		fix    string
	}{
		{"system", nil, "", Pass, ""},
		{"cert dir", map[string]string{"SSL_CERT_DIR": t.TempDir()}, "", Pass, ""},
		{"missing SSL_CERT_FILE", map[string]string{"SSL_CERT_FILE": "/nonexistent/ca.pem"}, "", Fail, "point SSL_CERT_FILE at a readable PEM bundle"},
		{"ca-file without PEM", nil, notPEM, Fail, "point --ca-file (MCPAUTH_CA_FILE) at a readable PEM file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := opts(tt.vars)
			o.F.Globals.CAFile = tt.caFile
			c := caCheck(o)
			if c.Status != tt.status || !strings.HasPrefix(c.Fix, tt.fix) {
				t.Fatalf("got %+v, want %s with fix %q", c, tt.status, tt.fix)
			}
		})
	}
}

func TestBrowserCheck(t *testing.T) {
	const url = "https://mcp.example.com/mcp"
	for _, tt := range []struct {
		name   string
		vars   map[string]string
		onPath []string
		status Status
		want   string // in detail or fix
	}{
		{"ssh", map[string]string{"SSH_CONNECTION": "10.0.0.1 22 10.0.0.2 22", "DISPLAY": ":0"}, []string{"xdg-open"}, Warn, "mcpauth device " + url},
		{"no display", nil, []string{"xdg-open"}, Warn, "no graphical display"},
		{"desktop", map[string]string{"DISPLAY": ":0", "BROWSER": "firefox"}, []string{"xdg-open"}, Pass, "xdg-open (which honours BROWSER=firefox)"},
		{"no opener", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, nil, Warn, "apt-get install xdg-utils"},
		{"browser command", map[string]string{"MCPAUTH_BROWSER": "chromium --new-window"}, []string{"chromium"}, Pass, "MCPAUTH_BROWSER (chromium)"},
		{"missing command", map[string]string{"MCPAUTH_BROWSER": "nosuchbrowser"}, nil, Fail, "not an executable on PATH"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := browserCheck(opts(tt.vars, tt.onPath...), url)
			if c.Status != tt.status || !strings.Contains(c.Detail+c.Fix, tt.want) {
				t.Fatalf("got %+v, want %s mentioning %q", c, tt.status, tt.want)
			}
		})
	}
}

// What the keyring check says for each way the keyring fails; the errors
// are the ones keyring returns (see its probe and timeout tests).
func TestKeyringFixes(t *testing.T) {
	for _, tt := range []struct {
		err         error
		detail, fix string
	}{
		{keyring.ErrKeyringLocked, "is locked", "gnome-keyring-daemon --unlock"},
		{&keyring.UnavailableError{Op: "get", Cause: &keyring.TimeoutError{Op: "get", Timeout: 3 * time.Second}}, "did not answer within 3s", "gnome-keyring-daemon --unlock"},
		{keyring.ErrNoSessionBus, "no D-Bus session bus", "--storage=file"},
		{keyring.ErrNoSecretService, "Secret Service", "apt-get install gnome-keyring"},
	} {
		if d, f := keyringDetail(tt.err), keyringFix(tt.err); !strings.Contains(d, tt.detail) || !strings.Contains(f, tt.fix) {
			t.Errorf("%v: detail %q, fix %q; want %q and %q", tt.err, d, f, tt.detail, tt.fix)
		}
	}
}
