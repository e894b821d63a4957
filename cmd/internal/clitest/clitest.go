// Package clitest runs the whole CLI (root.Run with a test Factory) for the
// tests beside each verb: against the reference server in-process, real HTTP
// on loopback, real flows, real file storage in a temp dir. Only the person
// is simulated: a browser-like HTTP client signs in at the development
// identity provider and presses buttons.
package clitest

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/iostreams"
	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// Buffer is an output stream the test reads while the CLI writes it.
type Buffer struct{ syncbuf.Buffer }

// WaitFor polls the buffer until re matches (bounded).
func (b *Buffer) WaitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	for range 500 {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in output:\n%s", re, b.String())
	return nil
}

// CLI is one configured mcpauth invocation environment.
type CLI struct {
	T    *testing.T
	Env  *servertest.Env
	Vars map[string]string
	// Open stands in for the person's browser during login (nil: the
	// factory decides from the environment, as in production).
	Open  func(string) error
	Clock flows.Clock
	Stdin string
	// TTY makes stdin and stderr terminals (prompts, Enter, countdown).
	TTY bool
	// Backend replaces the OS keyring (nil: the real one, never reached
	// with MCPAUTH_STORAGE=file).
	Backend        keyring.Backend
	KeyringTimeout time.Duration
	// Wrap adjusts the factory after it is built (e.g. its HTTP client).
	Wrap func(*cmdutil.Factory)
}

// New stores tokens in files in a temp dir and points the proxy variables
// at a dead proxy: every test also proves loopback is never proxied.
func New(t *testing.T, env *servertest.Env) *CLI {
	return &CLI{T: t, Env: env, Vars: map[string]string{
		"MCPAUTH_CONFIG_DIR": t.TempDir(),
		"MCPAUTH_STORAGE":    "file",
		"HTTP_PROXY":         "http://127.0.0.1:9",
		"HTTPS_PROXY":        "http://127.0.0.1:9",
	}, Clock: flows.RealClock{}}
}

// Run executes the CLI and returns exit code, stdout and stderr.
func (c *CLI) Run(args ...string) (int, string, string) {
	c.T.Helper()
	out, errOut := &Buffer{}, &Buffer{}
	return c.RunWith(out, errOut, args...), out.String(), errOut.String()
}

// Factory is the Factory a run gets.
func (c *CLI) Factory(out, errOut io.Writer) *cmdutil.Factory {
	ios := &cmdutil.IOStreams{In: strings.NewReader(c.Stdin), Out: out, ErrOut: errOut, StdinTTY: c.TTY, StderrTTY: c.TTY}
	getenv := func(k string) string { return c.Vars[k] }
	ios.Width = iostreams.Columns(getenv) // as cmdutil.System reads it
	f := cmdutil.New(ios, getenv)
	f.Clock = c.Clock
	f.OpenBrowser = c.Open
	f.KeyringBackend = c.Backend
	f.KeyringTimeout = c.KeyringTimeout
	if c.Wrap != nil {
		c.Wrap(f)
	}
	return f
}

// RunWith executes the CLI writing to out and errOut, which the test may
// read while it runs.
func (c *CLI) RunWith(out, errOut *Buffer, args ...string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return root.Run(ctx, c.Factory(out, errOut), args)
}

// Follow is a browser for flowstest's server, which approves at once: it
// opens the URL and follows the redirects to the CLI's loopback listener.
func Follow(authURL string) error {
	resp, err := http.Get(authURL)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// ApprovingBrowser signs in as user, presses action on the consent page and
// follows the redirect to the CLI's loopback listener, as a browser would.
func ApprovingBrowser(t *testing.T, env *servertest.Env, user, action string) func(string) error {
	return ReadingBrowser(t, env, user, action, nil)
}

// ReadingBrowser is ApprovingBrowser that also keeps the page the CLI's
// loopback listener answers with in *page (when page is not nil).
func ReadingBrowser(t *testing.T, env *servertest.Env, user, action string, page *string) func(string) error {
	b := env.Browser(user)
	return func(authURL string) error {
		back, err := b.Consent(context.Background(), authURL, action)
		if err != nil {
			t.Errorf("browser: %v", err)
			return err
		}
		resp, err := http.Get(back.String())
		if err != nil {
			t.Errorf("browser: following redirect to the CLI: %v", err)
			return err
		}
		defer resp.Body.Close()
		if page != nil {
			body, err := io.ReadAll(resp.Body)
			*page = string(body)
			return err
		}
		return nil
	}
}

// Device tests run two fake clocks side by side: the server's (env.Clock,
// which decides pending, slow_down and expiry) and the CLI's (a manual
// flowstest.FakeClock, which paces polling). A step waits until the CLI is
// parked between polls, then moves the server's clock and the CLI's, so the
// test decides how much time the server sees pass before each poll.
type Device struct {
	Code   string // the user code shown in the box
	Out    *Buffer
	ErrOut *Buffer
	Clock  *flowstest.FakeClock // the CLI's: it records the waits between polls
	t      *testing.T
	c      *CLI
	done   chan int
}

var codeRE = regexp.MustCompile(`Your code: ([A-Z]{4}-[0-9]{4})`)

// StartDevice runs `mcpauth device` in the background until it shows a code.
func StartDevice(t *testing.T, c *CLI, extra ...string) *Device {
	t.Helper()
	d := &Device{t: t, c: c, Clock: flowstest.NewFakeClock(servertest.Start), Out: &Buffer{}, ErrOut: &Buffer{}, done: make(chan int, 1)}
	c.Clock = d.Clock
	go func() {
		d.done <- c.RunWith(d.Out, d.ErrOut, append([]string{"device", c.Env.URL + "/mcp"}, extra...)...)
	}()
	d.Code = d.ErrOut.WaitFor(t, codeRE)[1]
	return d
}

// Poll lets one poll happen after the server saw serverTime pass; the CLI's
// clock moves by the interval it asked for.
func (d *Device) Poll(serverTime time.Duration) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Clock.BlockUntil(ctx, 1); err != nil {
		d.t.Fatalf("the CLI is not waiting to poll: %v\n%s", err, d.ErrOut.String())
	}
	waits := d.Clock.Waits()
	d.c.Env.Clock.Advance(serverTime)
	d.Clock.Advance(waits[len(waits)-1])
}

// Exit waits for the command to end and returns its exit code.
func (d *Device) Exit() int {
	d.t.Helper()
	select {
	case code := <-d.done:
		return code
	case <-time.After(30 * time.Second):
		d.t.Fatalf("device did not finish:\n%s", d.ErrOut.String())
		return -1
	}
}

// Approve enters the code at the device page as user and presses action.
func (d *Device) Approve(user, action string) {
	d.t.Helper()
	// Typed as a person might: lower case, no hyphen.
	typed := strings.ToLower(strings.ReplaceAll(d.Code, "-", ""))
	page, err := d.c.Env.Browser(user).Device(context.Background(), typed, action)
	if err != nil || page.Status != 200 {
		d.t.Fatalf("%s at the device page: %v %v", action, page, err)
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// Golden compares got with testdata/name after replacing each digit of a
// loopback port with X (keeping table columns aligned), so the files are
// stable across runs; -update rewrites them. Ephemeral ports have 5 digits
// on Linux, macOS and Windows. Times are already fixed: the server's and
// the CLI's clocks start at servertest.Start.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	got = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllStringFunc(got, func(hostPort string) string {
		return "127.0.0.1:" + strings.Repeat("X", len(hostPort)-len("127.0.0.1:"))
	})
	// Random user ids likewise, keeping their length.
	got = regexp.MustCompile(`u_[0-9A-Za-z_-]{16}`).ReplaceAllStringFunc(got, func(id string) string { return "u_" + strings.Repeat("X", len(id)-2) })
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// Stored is the bundle the CLI stored for server (default account), read
// from its file storage.
func (c *CLI) Stored(server string) creds.Bundle {
	c.T.Helper()
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		c.T.Fatal(err)
	}
	b, err := creds.Load(st, server, "")
	if err != nil {
		c.T.Fatal(err)
	}
	return b
}

// RecordingBrowser writes a stand-in browser program (a shell script) that
// appends each argument it is run with, one a line, to a file, and returns
// its path and a reader of what it recorded so far.
func RecordingBrowser(t *testing.T) (program string, recorded func() string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in browser is a shell script")
	}
	dir := t.TempDir()
	args, program := filepath.Join(dir, "args"), filepath.Join(dir, "browser")
	if err := os.WriteFile(program, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >> '"+args+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, func() string {
		b, _ := os.ReadFile(args)
		return string(b)
	}
}
