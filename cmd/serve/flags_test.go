package serve_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/root"
)

// Flags that would expose test-only or dev-only parts beyond this machine
// are refused before anything listens.
func TestServeRefusesExposedTestClock(t *testing.T) {
	var errOut bytes.Buffer
	ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut}
	f := cmdutil.New(ios, func(string) string { return "" })
	code := root.Run(context.Background(), f, []string{"serve", "--test-clock", "--addr", "127.0.0.1:0", "--db", ":memory:", "--base-url", "https://mcp.example.com"})
	if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "--test-clock is only allowed with a loopback --base-url") {
		t.Fatalf("exit %d, want %d with the reason:\n%s", code, cmdutil.ExitUsage, errOut.String())
	}
}
