package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// parse runs serve's flag parsing (and environment binding) only.
func parse(t *testing.T, env map[string]string, args ...string) *Options {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
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
		{nil, []string{"--addr", "0.0.0.0:8080", "--base-url", "http://127.0.0.1:8080"}, "loopback --addr"},
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

func keyFile(t *testing.T, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The keys come from files (repeatable for previous ones) or the
// environment; a configured JWT key needs a sealing key of its own.
func TestKeyFlags(t *testing.T) {
	const (
		jwt1  = "jwt-key-1-0123456789abcdefghijklmnopqrstu"
		jwt2  = "jwt-key-2-0123456789abcdefghijklmnopqrstu"
		jwt3  = "jwt-key-3-0123456789abcdefghijklmnopqrstu"
		seal1 = "seal-key-1-0123456789abcdefghijklmnopqrst"
		seal2 = "seal-key-2-0123456789abcdefghijklmnopqrst"
	)
	k, err := readKeys(parse(t, nil,
		"--jwt-key-file", keyFile(t, jwt1), "--jwt-previous-key-file", keyFile(t, jwt2), "--jwt-previous-key-file", keyFile(t, jwt3),
		"--sealing-key-file", keyFile(t, seal1), "--sealing-previous-key-file", keyFile(t, seal2)))
	if err != nil {
		t.Fatal(err)
	}
	if string(k.jwt) != jwt1 || len(k.jwtPrevious) != 2 || string(k.jwtPrevious[0]) != jwt2 || string(k.jwtPrevious[1]) != jwt3 ||
		string(k.sealing) != seal1 || len(k.sealingPrevious) != 1 || string(k.sealingPrevious[0]) != seal2 {
		t.Fatalf("keys from files: %q", k)
	}

	env := map[string]string{"MCPAUTH_JWT_KEY": jwt1, "MCPAUTH_JWT_PREVIOUS_KEYS": jwt2 + ", " + jwt3 + ",",
		"MCPAUTH_SEALING_KEY": seal1, "MCPAUTH_SEALING_PREVIOUS_KEYS": seal2}
	k, err = readKeys(parse(t, env))
	if err != nil {
		t.Fatal(err)
	}
	if string(k.jwt) != jwt1 || len(k.jwtPrevious) != 2 || string(k.jwtPrevious[1]) != jwt3 || string(k.sealing) != seal1 || len(k.sealingPrevious) != 1 {
		t.Fatalf("keys from the environment: %q", k)
	}

	if k, err := readKeys(parse(t, nil)); err != nil || k.jwt != nil || k.sealing != nil {
		t.Fatalf("no keys configured: %q, %v; want all generated", k, err)
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"MCPAUTH_JWT_KEY": jwt1}, nil, "sealing key too"},
		{nil, []string{"--jwt-key-file", keyFile(t, jwt1)}, "sealing key too"},
		{map[string]string{"MCPAUTH_JWT_KEY": jwt1, "MCPAUTH_SEALING_KEY": jwt1}, nil, "must differ"},
		{map[string]string{"MCPAUTH_SEALING_KEY": "short"}, nil, "at least 32"},
		{map[string]string{"MCPAUTH_JWT_PREVIOUS_KEYS": jwt2 + ",short"}, nil, "at least 32"},
		{nil, []string{"--sealing-previous-key-file", keyFile(t, "short")}, "at least 32"},
	} {
		if _, err := readKeys(parse(t, tt.env, tt.args...)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: err = %v, want %q", tt.env, tt.args, err, tt.want)
		}
	}
}

// The test clock never becomes public: neither on a public --addr nor
// behind a proxy whose public --base-url reaches a loopback listener.
func TestTestClockStaysOnLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--test-clock", "--addr", "0.0.0.0:8080", "--oidc-issuer", "https://idp.example.com"},
		{"--test-clock", "--base-url", "https://mcp.example.com", "--oidc-issuer", "https://idp.example.com"},
	} {
		if err := checkExposure(parse(t, nil, args...)); err == nil || !strings.Contains(err.Error(), "--test-clock") {
			t.Errorf("%v: err = %v, want a refusal naming --test-clock", args, err)
		}
	}
	if err := checkExposure(parse(t, nil, "--test-clock", "--base-url", "http://127.0.0.1:8080")); err != nil {
		t.Errorf("loopback test clock refused: %v", err)
	}
}

// Off loopback the public URL cannot be guessed from the listen address, so
// --base-url is required, and refused before anything listens.
func TestBaseURLRequiredOffLoopback(t *testing.T) {
	const issuer = "--oidc-issuer=http://127.0.0.1:1" // no development IdP in the way
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:8080"}, {"--addr", ":8080"}, {"--addr", "[::]:8080"}, {"--addr", "10.1.2.3:8080"},
	} {
		err := checkExposure(parse(t, nil, append(args, issuer)...))
		if err == nil || !strings.Contains(err.Error(), "--base-url") {
			t.Errorf("%v: err = %v, want a refusal naming --base-url", args, err)
		}
	}
	if err := checkExposure(parse(t, map[string]string{"MCPAUTH_ADDR": "0.0.0.0:8080"}, issuer)); err == nil {
		t.Error("MCPAUTH_ADDR=0.0.0.0:8080 without a base URL was accepted")
	}
	for _, args := range [][]string{
		{"--addr", "127.0.0.1:8080"},
		{"--addr", "0.0.0.0:8080", "--base-url", "https://mcp.example.com"},
	} {
		if err := checkExposure(parse(t, nil, append(args, issuer)...)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	ios, _, _, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := Run(ctx, &Options{
		IO: ios, Getenv: func(string) string { return "" }, Addr: "0.0.0.0:0", DB: ":memory:",
		OIDCIssuer: "http://127.0.0.1:1", LogFormat: "text", LogLevel: "error",
		Ready: func(string) { t.Error("the server started listening"); cancel() },
	})
	if err == nil || !strings.Contains(err.Error(), "--base-url") {
		t.Fatalf("Run on 0.0.0.0:0: err = %v, want a refusal naming --base-url", err)
	}
}

// Metrics are off unless asked for, by flag or environment.
func TestMetricsAddrFlag(t *testing.T) {
	if got := parse(t, nil).MetricsAddr; got != "" {
		t.Errorf("default --metrics-addr %q, want off", got)
	}
	if got := parse(t, nil, "--metrics-addr", "127.0.0.1:9464").MetricsAddr; got != "127.0.0.1:9464" {
		t.Errorf("--metrics-addr gave %q", got)
	}
	if got := parse(t, map[string]string{"MCPAUTH_METRICS_ADDR": "[::1]:9464"}).MetricsAddr; got != "[::1]:9464" {
		t.Errorf("MCPAUTH_METRICS_ADDR gave %q", got)
	}
}
