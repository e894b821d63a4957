package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

func TestProxyFuncNeverProxiesLoopback(t *testing.T) {
	env := map[string]string{"HTTPS_PROXY": "http://proxy.test:3128", "http_proxy": "http://proxy.test:3129", "NO_PROXY": "internal.test"}
	proxy := ProxyFunc(func(k string) string { return env[k] })
	for _, tt := range []struct{ url, want string }{
		{"https://mcp.example.com/mcp", "http://proxy.test:3128"},
		{"http://mcp.example.com/mcp", "http://proxy.test:3129"},
		{"https://api.internal.test/mcp", ""},
		{"http://127.0.0.1:8080/api/ping", ""},
		{"http://[::1]:8080/mcp", ""},
		{"http://localhost:8080/mcp", ""},
		{"http://127.0.0.2:8080/mcp", ""},
	} {
		req, _ := http.NewRequest("GET", tt.url, nil)
		got, err := proxy(req)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got); (got == nil && tt.want != "") || (got != nil && s != tt.want) {
			t.Errorf("proxy for %s = %v, want %q", tt.url, got, tt.want)
		}
	}
}

func TestHeadless(t *testing.T) {
	for _, tt := range []struct {
		env      map[string]string
		goos     string
		headless bool
	}{
		{map[string]string{"DISPLAY": ":0"}, "linux", false},
		{map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, "linux", false},
		{map[string]string{}, "linux", true},
		{map[string]string{}, "darwin", false},
		{map[string]string{"DISPLAY": ":0", "SSH_CONNECTION": "1 2 3 4"}, "linux", true},
		{map[string]string{"SSH_TTY": "/dev/pts/1"}, "darwin", true},
	} {
		if got := Headless(func(k string) string { return tt.env[k] }, tt.goos) != ""; got != tt.headless {
			t.Errorf("Headless(%v, %s) = %v, want %v", tt.env, tt.goos, got, tt.headless)
		}
	}
}

func TestCodeFor(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	for _, tt := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("x: %w", flows.ErrAccessDenied), ExitDenied},
		{fmt.Errorf("x: %w", flows.ErrExpiredToken), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrDeviceCodeExpired), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrTimeout), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrUnauthorized), ExitAuthRequired},
		{&url.Error{Op: "Get", URL: "http://x", Err: netErr}, ExitNetwork},
		{&keyring.UnavailableError{Op: "get", Cause: errors.New("no bus")}, ExitStorage},
		{fmt.Errorf("x: %w", keyring.ErrLocked), ExitStorage},
		{fmt.Errorf("x: %w", context.Canceled), ExitCancelled},
		{WithExit(ExitUsage, errors.New("u")), ExitUsage},
		{fmt.Errorf("x: %w", creds.ErrAuthRequired), ExitAuthRequired},
		{fmt.Errorf("x: %w", creds.ErrStorage), ExitStorage},
		{fmt.Errorf("x: %w", creds.ErrInput), ExitUsage},
		{fmt.Errorf("x: %w", creds.ErrRefresh), ExitNetwork},
		{&creds.AmbiguousError{Servers: []string{"a", "b"}}, ExitUsage},
		// A usage error inside a renewal keeps its code: the cause decides.
		{fmt.Errorf("renewing: %w", fmt.Errorf("%w: %w", WithExit(ExitUsage, errors.New("--ca-file")), creds.ErrAuthRequired)), ExitUsage},
		{errors.New("other"), ExitFailure},
	} {
		if got := CodeFor(tt.err); got != tt.want {
			t.Errorf("CodeFor(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// Tables get COLUMNS when set, 80 on a terminal that said nothing, and no
// limit on a pipe.
func TestTerminalWidth(t *testing.T) {
	env := map[string]string{"COLUMNS": "132"}
	if got := Columns(func(k string) string { return env[k] }); got != 132 {
		t.Fatalf("COLUMNS=132: %d", got)
	}
	for _, bad := range []string{"", "wide", "-3", "0"} {
		env["COLUMNS"] = bad
		if got := Columns(func(k string) string { return env[k] }); got != 0 {
			t.Errorf("COLUMNS=%q: %d, want 0", bad, got)
		}
	}
	for _, tt := range []struct {
		s    IOStreams
		want int
	}{
		{IOStreams{Width: 100}, 100},
		{IOStreams{Width: 100, StdoutTTY: true}, 100},
		{IOStreams{StdoutTTY: true}, 80},
		{IOStreams{}, 0},
	} {
		if got := tt.s.TerminalWidth(); got != tt.want {
			t.Errorf("%+v: %d, want %d", tt.s, got, tt.want)
		}
	}
}
