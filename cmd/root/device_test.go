package root_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// gatedClock is the CLI's clock in device tests. It reads the server's fake
// clock, and each wait (a poll interval) first blocks until the test lets
// it go, then moves the server's clock by step(d) and fires: so server and
// CLI agree on time and the test decides what happens between polls.
type gatedClock struct {
	server *clock.Fake
	gate   chan time.Duration // the test sends how far to move before the poll

	mu    sync.Mutex
	waits []time.Duration
}

func (g *gatedClock) Now() time.Time { return g.server.Now() }

func (g *gatedClock) After(d time.Duration) <-chan time.Time {
	g.mu.Lock()
	g.waits = append(g.waits, d)
	g.mu.Unlock()
	ch := make(chan time.Time, 1)
	go func() {
		move := <-g.gate
		if move < 0 {
			move = d
		}
		g.server.Advance(move)
		ch <- g.server.Now()
	}()
	return ch
}

func (g *gatedClock) recorded() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Duration(nil), g.waits...)
}

var codeRE = regexp.MustCompile(`Your code: ([A-Z]{4}-[0-9]{4})`)

// startDevice runs `mcpauth device` in the background and returns the user
// code it shows and a channel with its exit code.
func startDevice(t *testing.T, c *cli, extra ...string) (string, *syncBuffer, <-chan int) {
	t.Helper()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- c.runWith(out, errOut, append([]string{"device", c.env.URL + "/mcp"}, extra...)...) }()
	return errOut.waitFor(t, codeRE)[1], errOut, done
}

func exitCode(t *testing.T, done <-chan int, errOut *syncBuffer) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("device did not finish:\n%s", errOut.String())
		return -1
	}
}

const asInterval = -1 // gate value: move by exactly the interval asked for

func TestDevicePendingSlowDownApproval(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	g := &gatedClock{server: env.Clock, gate: make(chan time.Duration)}
	c.clock = g
	userCode, errOut, done := startDevice(t, c, "--debug")

	g.gate <- asInterval      // first poll after 5 s: authorization_pending
	g.gate <- 1 * time.Second // second poll only 1 s later: too fast → slow_down
	// The next wait must be 5 s longer (RFC 8628 §3.5).
	errOut.waitFor(t, regexp.MustCompile(`slow_down`))
	page, err := env.Browser("frank").Device(context.Background(), strings.ToLower(strings.ReplaceAll(userCode, "-", "")), "approve")
	if err != nil || page.Status != 200 {
		t.Fatalf("approving: %v %v", page, err)
	}
	g.gate <- asInterval // poll after the raised interval: the token
	if code := exitCode(t, done, errOut); code != 0 {
		t.Fatalf("device exit %d:\n%s", code, errOut.String())
	}
	waits := g.recorded()
	if len(waits) < 3 || waits[0] != 5*time.Second || waits[2] != 10*time.Second {
		t.Fatalf("poll waits %v: want 5s, 5s, then 10s after slow_down", waits)
	}
	if code, stdout, _ := c.run("ping"); code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping after device login: %d %q", code, stdout)
	}
}

func TestDeviceDeniedExits4(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	g := &gatedClock{server: env.Clock, gate: make(chan time.Duration)}
	c.clock = g
	userCode, errOut, done := startDevice(t, c)
	if _, err := env.Browser("gina").Device(context.Background(), userCode, "deny"); err != nil {
		t.Fatal(err)
	}
	g.gate <- asInterval
	if code := exitCode(t, done, errOut); code != cmdutil.ExitDenied {
		t.Fatalf("exit %d, want %d:\n%s", code, cmdutil.ExitDenied, errOut.String())
	}
}

func TestDeviceExpiredExits5(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	g := &gatedClock{server: env.Clock, gate: make(chan time.Duration)}
	c.clock = g
	_, errOut, done := startDevice(t, c)
	g.gate <- 901 * time.Second // nobody approved within 900 s
	if code := exitCode(t, done, errOut); code != cmdutil.ExitExpired {
		t.Fatalf("exit %d, want %d:\n%s", code, cmdutil.ExitExpired, errOut.String())
	}
	if !strings.Contains(errOut.String(), "expired") {
		t.Fatalf("no clear message:\n%s", errOut.String())
	}
}

func TestDeviceBoxShowsCodeAndURI(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	g := &gatedClock{server: env.Clock, gate: make(chan time.Duration)}
	c.clock = g
	userCode, errOut, done := startDevice(t, c)
	text := errOut.String()
	for _, want := range []string{"╭", "Open:  " + env.URL + "/auth/device", "Enter: " + userCode, "user_code=" + userCode} {
		if !strings.Contains(text, want) {
			t.Errorf("device box lacks %q:\n%s", want, text)
		}
	}
	g.gate <- 901 * time.Second
	exitCode(t, done, errOut)
}

// fixedClock reads the server's fake clock and waits for real.
type fixedClock struct{ c *clock.Fake }

func (f *fixedClock) Now() time.Time                         { return f.c.Now() }
func (f *fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
