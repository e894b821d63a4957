package conformance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
)

// The test user's secrets never need argv: standard input, a file or the
// environment.
func TestSecretsOffTheCommandLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cookie")
	if err := os.WriteFile(file, []byte("cookie-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args        []string
		stdin       string
		env         map[string]string
		key, cookie string
	}{
		{[]string{"--api-key", "-", "--session-cookie-file", file}, "key-from-stdin\n", nil, "key-from-stdin", "cookie-from-file"},
		{nil, "", map[string]string{"MCPAUTH_API_KEY": "key-from-env", "MCPAUTH_SESSION_COOKIE_FILE": file}, "key-from-env", "cookie-from-file"},
	} {
		ios := &cmdutil.IOStreams{In: strings.NewReader(tt.stdin), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		f := cmdutil.New(ios, func(k string) string { return tt.env[k] })
		var got *Options
		cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(append([]string{"http://127.0.0.1:8080"}, tt.args...))
		if err := cmd.Execute(); err != nil || got == nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got.APIKey != tt.key || got.SessionCookie != tt.cookie {
			t.Errorf("%v: api key %q, cookie %q", tt.args, got.APIKey, got.SessionCookie)
		}
	}
}
