package clierr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/internal/keyfile"
)

// creds says what happened; the CLI adds how to log in, or how to fix a
// key file, worded here once.
func TestWithFix(t *testing.T) {
	cause := errors.New("the token expired")
	cases := []struct {
		err  error
		want string
	}{
		{&creds.LoginError{Server: "https://mcp.example.com/mcp", Err: cause}, "the token expired; run: mcpauth login https://mcp.example.com/mcp"},
		{&creds.LoginError{Err: cause}, "the token expired; run: mcpauth login <mcp-url>"},
		{fmt.Errorf("ping: %w", &creds.LoginError{Server: "s", Machine: true, Err: cause}), "ping: the token expired; run: mcpauth login s with the same options"},
		{cause, "the token expired"},
		{fmt.Errorf("token: private key file %w", &keyfile.InsecureError{Path: "/k.pem", Perm: 0o644}),
			"token: private key file /k.pem is accessible by group or others (mode 0644); run chmod 600 /k.pem, or log in with --allow-insecure-key-file to use it anyway (unsafe)"},
	}
	for _, c := range cases {
		if got := WithFix(c.err).Error(); got != c.want {
			t.Errorf("WithFix(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
