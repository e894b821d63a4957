package proxy_test

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/keyring"
)

// A host's first start without a login: proxy --login opens the browser,
// and the host, tired of waiting, closes stdin. The proxy stops the login
// and exits at once instead of waiting minutes for a browser nobody uses.
func TestLoginStopsWhenHostClosesStdin(t *testing.T) {
	s := flowstest.NewServer(t)
	c := clitest.New(t, nil)
	opened := make(chan string, 1)
	var once sync.Once
	c.Open = func(u string) error { // a browser nobody signs in with
		once.Do(func() { opened <- u })
		return nil
	}
	stdin, host, err := os.Pipe() // as a host starts it: buffered by the OS
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	c.Wrap = func(f *cmdutil.Factory) { f.IO.In = stdin }
	out, errOut := &clitest.Buffer{}, &clitest.Buffer{}
	exited := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { exited <- root.Run(ctx, c.Factory(out, errOut), []string{"proxy", s.URL + "/mcp", "--login"}) }()
	select {
	case <-opened:
	case code := <-exited:
		t.Fatalf("the proxy exited (%d) before opening the browser: %s", code, errOut.String())
	}
	// The host sent initialize, then gave up.
	if _, err := io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	host.Close()
	select {
	case code := <-exited:
		if d := time.Since(start); d > 5*time.Second || code == 0 {
			t.Errorf("exit %d after %s", code, d)
		}
	case <-time.After(10 * time.Second):
		cancel()
		<-exited
		t.Fatalf("the proxy still waits for the login 10 s after the host closed stdin:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "closed stdin") || out.String() != "" {
		t.Errorf("stdout %q, stderr:\n%s", out.String(), errOut.String())
	}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := st.List(); err != nil || len(entries) != 0 {
		t.Errorf("stored %v (%v) after a stopped login", entries, err)
	}
}
