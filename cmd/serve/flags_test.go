package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
)

// parse runs serve's flag parsing (and environment binding) only.
func parse(t *testing.T, env map[string]string, args ...string) *Options {
	t.Helper()
	ios, _, _, _ := cmdutil.Test()
	f := cmdutil.New(ios, func(k string) string { return env[k] })
	var got *Options
	cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil || got == nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

// The development identity provider never leaves loopback: not through its
// own address, not through a public base URL. Checked before anything binds.
func TestDevIdPStaysOnLoopback(t *testing.T) {
	refused := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--addr", "0.0.0.0:8080"}, "loopback --addr"},
		{nil, []string{"--dev-idp-addr", "0.0.0.0:9999"}, "--dev-idp-addr"},
		{nil, []string{"--dev-idp-addr", ":9999"}, "--dev-idp-addr"},
		{nil, []string{"--dev-idp-addr", "[::]:9999"}, "--dev-idp-addr"},
		{nil, []string{"--dev-idp-addr", "10.1.2.3:0"}, "--dev-idp-addr"},
		{map[string]string{"MCPAUTH_DEV_IDP_ADDR": "0.0.0.0:0"}, nil, "--dev-idp-addr"},
		{nil, []string{"--base-url", "https://mcp.example.com"}, "--base-url"},
		{nil, []string{"--base-url", "http://192.168.1.5:8080"}, "--base-url"},
		{map[string]string{"MCPAUTH_BASE_URL": "https://mcp.example.com"}, nil, "--base-url"},
	}
	for _, tt := range refused {
		err := checkExposure(parse(t, tt.env, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: err = %v, want a refusal naming %s", tt.env, tt.args, err, tt.want)
		}
	}
	accepted := [][]string{
		nil,
		{"--dev-idp-addr", "127.0.0.1:9999", "--base-url", "http://localhost:8080"},
		{"--dev-idp-addr", "[::1]:0", "--base-url", "http://[::1]:8080/prefix"},
		{"--dev-idp-addr", "localhost:0", "--base-url", "http://127.0.0.1:8080"},
		// A real provider: the development one does not run at all.
		{"--oidc-issuer", "https://accounts.example.com", "--addr", "0.0.0.0:8080", "--dev-idp-addr", "0.0.0.0:1", "--base-url", "https://mcp.example.com"},
	}
	for _, args := range accepted {
		if err := checkExposure(parse(t, nil, args...)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
