package login

import (
	"context"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// Flag parsing only (behaviour is tested through the reference server in
// cmd/root): runF captures the Options instead of logging in.
func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.New(ios, func(string) string { return "" })
	tests := []struct {
		args  []string
		check func(*Options) bool
	}{
		{[]string{"http://127.0.0.1:8080/mcp"}, func(o *Options) bool {
			return o.Target == "http://127.0.0.1:8080/mcp" && o.Timeout == 5*time.Minute && !o.NoBrowser && !o.NoResource && o.Port == 0
		}},
		{[]string{"https://x.test/mcp", "--port", "8765", "--timeout", "30s", "--no-resource", "--scope", "mcp", "--client-id", "c1", "--client-secret", "s1"}, func(o *Options) bool {
			return o.Port == 8765 && o.Timeout == 30*time.Second && o.NoResource && o.Scope == "mcp" && o.ClientID == "c1" && o.ClientSecret == "s1"
		}},
		{[]string{"https://x.test/mcp", "--no-browser", "--browser-command", "firefox --new-window", "--allow-missing-s256"}, func(o *Options) bool {
			return o.NoBrowser && o.BrowserCommand == "firefox --new-window" && o.Discover.AllowMissingS256
		}},
	}
	for _, tt := range tests {
		var got *Options
		cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil || got == nil || !tt.check(got) {
			t.Errorf("%v: err %v, options %+v", tt.args, err, got)
		}
	}
}

// MCPAUTH_CLIENT_METADATA_URL is the default of --client-metadata-url; the
// flag wins.
func TestClientMetadataURLFromEnv(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	env := map[string]string{"MCPAUTH_CLIENT_METADATA_URL": "https://app.example/client.json"}
	f := cmdutil.New(ios, func(k string) string { return env[k] })
	for args, want := range map[string]string{
		"": "https://app.example/client.json",
		"--client-metadata-url=https://o.example/c.json": "https://o.example/c.json",
	} {
		var got *Options
		cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
		a := []string{"https://x.test/mcp"}
		if args != "" {
			a = append(a, args)
		}
		cmd.SetArgs(a)
		if err := cmd.Execute(); err != nil || got == nil || got.ClientMetadataURL != want {
			t.Errorf("%q: err %v, options %+v", args, err, got)
		}
	}
}
