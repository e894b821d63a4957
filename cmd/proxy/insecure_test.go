package proxy_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/root"
)

// The proxy sends the credential on every request: over plain http to a
// host that is not loopback it refuses to start, whatever the transport,
// and names the override.
func TestProxyRefusesPlainHTTPOffLoopback(t *testing.T) {
	for _, transport := range []string{"auto", "streamable", "sse"} {
		errOut := &bytes.Buffer{}
		ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut}
		f := cmdutil.New(ios, func(k string) string { return map[string]string{"MCPAUTH_TOKEN": "secret-token"}[k] })
		code := root.Run(context.Background(), f, []string{"proxy", "--transport", transport, "http://mcp.example.test/mcp"})
		if code != clierr.ExitUsage || !strings.Contains(errOut.String(), "--allow-insecure-http") {
			t.Errorf("%s: exit %d: %s", transport, code, errOut)
		}
	}
}
