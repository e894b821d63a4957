package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"proxy", "http://127.0.0.1:1/mcp", "--transport", "websocket"},
		{"proxy", "http://127.0.0.1:1/mcp", "--header", "no colon"},
		{"proxy", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer x"},
		{"proxy"},
	} {
		streams, _, out, errOut := iostreams.Test()
		f := cmdutil.New(streams, func(string) string { return "" })
		if code := root.Run(t.Context(), f, args); code != clierr.ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errOut)
		}
		if out.Len() != 0 {
			t.Errorf("%v: stdout %q", args, out)
		}
		if !strings.Contains(errOut.String(), "mcpauth:") {
			t.Errorf("%v: stderr %q", args, errOut)
		}
	}
}
