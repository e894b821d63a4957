package register

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// Flag parsing only; registration itself is tested against the reference
// server in cmd/root.
func TestRepeatableFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.New(ios, func(string) string { return "" })
	var got *Options
	cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"https://x.test/mcp", "--redirect-uri", "http://127.0.0.1:1/cb", "--redirect-uri", "myapp:/cb", "--grant-type", "authorization_code", "--grant-type", "refresh_token", "--no-cache", "--client-name", "ci"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.RedirectURIs, []string{"http://127.0.0.1:1/cb", "myapp:/cb"}) || !slices.Equal(got.GrantTypes, []string{"authorization_code", "refresh_token"}) || !got.NoCache || got.ClientName != "ci" {
		t.Fatalf("options %+v", got)
	}
}
