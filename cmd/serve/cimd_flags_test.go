package serve_test

import (
	"context"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/serve"
)

// --cimd-allow-private is off by default and set by the flag or by
// MCPAUTH_CIMD_ALLOW_PRIVATE.
func TestCIMDAllowPrivateFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, false},
		{[]string{"--cimd-allow-private"}, nil, true},
		{nil, map[string]string{"MCPAUTH_CIMD_ALLOW_PRIVATE": "true"}, true},
	} {
		ios, _, _, _ := cmdutil.Test()
		f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return tt.env[k] }}
		var got *serve.Options
		cmd := serve.NewCmd(f, func(_ context.Context, o *serve.Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v %v: %v", tt.args, tt.env, err)
		}
		if got.CIMDAllowPrivate != tt.want {
			t.Errorf("%v %v: CIMDAllowPrivate = %v, want %v", tt.args, tt.env, got.CIMDAllowPrivate, tt.want)
		}
	}
}
