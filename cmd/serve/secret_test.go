package serve_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/serve"
)

// The OpenID Connect client secret never needs argv: standard input, a
// file (also through MCPAUTH_OIDC_CLIENT_SECRET_FILE, for container
// secrets) or MCPAUTH_OIDC_CLIENT_SECRET.
func TestOIDCClientSecretSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args  []string
		stdin string
		env   map[string]string
		want  string
	}{
		{[]string{"--oidc-client-secret", "-"}, "from-stdin\n", nil, "from-stdin"},
		{[]string{"--oidc-client-secret-file", file}, "", map[string]string{"MCPAUTH_OIDC_CLIENT_SECRET": "from-env"}, "from-file"},
		{nil, "", map[string]string{"MCPAUTH_OIDC_CLIENT_SECRET": "from-env"}, "from-env"},
		{nil, "", map[string]string{"MCPAUTH_OIDC_CLIENT_SECRET_FILE": file}, "from-file"},
	} {
		ios := &cmdutil.IOStreams{In: strings.NewReader(tt.stdin), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		f := cmdutil.New(ios, func(k string) string { return tt.env[k] })
		var got string
		cmd := serve.NewCmd(f, func(_ context.Context, o *serve.Options) error { got = o.OIDCClientSecret; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil || got != tt.want {
			t.Errorf("%v %v: %q %v, want %q", tt.args, tt.env, got, err, tt.want)
		}
	}
}
