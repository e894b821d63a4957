package clierr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcpauth/mcpauth/creds"
)

// creds says what happened; the CLI adds how to log in, worded here once.
func TestLoginStep(t *testing.T) {
	cause := errors.New("the token expired")
	cases := []struct {
		err  error
		want string
	}{
		{&creds.LoginError{Server: "https://mcp.example.com/mcp", Err: cause}, "the token expired; run: mcpauth login https://mcp.example.com/mcp"},
		{&creds.LoginError{Err: cause}, "the token expired; run: mcpauth login <mcp-url>"},
		{fmt.Errorf("ping: %w", &creds.LoginError{Server: "s", Machine: true, Err: cause}), "ping: the token expired; run: mcpauth login s with the same options"},
		{cause, "the token expired"},
	}
	for _, c := range cases {
		if got := WithLoginStep(c.err).Error(); got != c.want {
			t.Errorf("WithLoginStep(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
