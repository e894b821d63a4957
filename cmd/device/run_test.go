package device_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// Ctrl-C while the countdown spins on a terminal: the spinner line is
// cleared before the message, which names the code that was waiting, and
// the exit code is 130.
func TestDeviceCancelledClearsTheSpinnerLine(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	errOut := &clitest.Buffer{}
	ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut, StderrTTY: true}
	vars := map[string]string{"MCPAUTH_CONFIG_DIR": t.TempDir(), "MCPAUTH_STORAGE": "file"}
	f := cmdutil.New(ios, func(k string) string { return vars[k] })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for !strings.Contains(errOut.String(), "Waiting for approval") {
			time.Sleep(10 * time.Millisecond)
		}
		cancel() // what Ctrl-C does to the context
	}()
	code := root.Run(ctx, f, []string{"device", env.URL + "/mcp"})
	out := errOut.String()
	if code != clierr.ExitCancelled {
		t.Fatalf("exit %d, want 130:\n%q", code, out)
	}
	m := regexp.MustCompile(`Your code: (\w{4}-\w{4})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no code box:\n%s", out)
	}
	tail := out[strings.LastIndex(out, "Waiting for approval"):]
	want := "\r\033[K\r\033[Kmcpauth: device login cancelled while waiting for code " + m[1] + " to be approved\n"
	if !strings.HasSuffix(tail, want) || strings.Count(tail, "mcpauth:") != 1 {
		t.Fatalf("after the spinner:\n%q\nwant it to end with\n%q", tail, want)
	}
	if strings.Contains(out, "context canceled") {
		t.Fatalf("bare context canceled:\n%q", out)
	}
}
