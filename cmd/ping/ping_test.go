package ping_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/root"
)

// Commands without their own wording still never say "context canceled"
// on Ctrl-C: root names the command, exit 130.
func TestPingCancelled(t *testing.T) {
	hang := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { cancel(); <-hang }))
	defer srv.Close()
	defer close(hang)
	errOut := &bytes.Buffer{}
	ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut}
	f := cmdutil.New(ios, func(k string) string { return map[string]string{"MCPAUTH_TOKEN": "t"}[k] })
	code := root.Run(ctx, f, []string{"ping", srv.URL + "/mcp"})
	if code != clierr.ExitCancelled || errOut.String() != "mcpauth: ping cancelled\n" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
