package root_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// Device tests run two fake clocks side by side: the server's (env.Clock,
// which decides pending, slow_down and expiry) and the CLI's (a manual
// flowstest.FakeClock, which paces polling). A step waits until the CLI is
// parked between polls, then moves the server's clock and the CLI's, so the
// test decides how much time the server sees pass before each poll.
type deviceRun struct {
	t      *testing.T
	c      *cli
	clock  *flowstest.FakeClock
	code   string // the user code shown in the box
	out    *syncBuffer
	errOut *syncBuffer
	done   chan int
}

var codeRE = regexp.MustCompile(`Your code: ([A-Z]{4}-[0-9]{4})`)

// startDevice runs `mcpauth device` in the background until it shows a code.
func startDevice(t *testing.T, c *cli, extra ...string) *deviceRun {
	t.Helper()
	d := &deviceRun{t: t, c: c, clock: flowstest.NewFakeClock(servertest.Start), out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan int, 1)}
	c.clock = d.clock
	go func() {
		d.done <- c.runWith(d.out, d.errOut, append([]string{"device", c.env.URL + "/mcp"}, extra...)...)
	}()
	d.code = d.errOut.waitFor(t, codeRE)[1]
	return d
}

// poll lets one poll happen after the server saw serverTime pass; the CLI's
// clock moves by the interval it asked for.
func (d *deviceRun) poll(serverTime time.Duration) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.clock.BlockUntil(ctx, 1); err != nil {
		d.t.Fatalf("the CLI is not waiting to poll: %v\n%s", err, d.errOut.String())
	}
	waits := d.clock.Waits()
	d.c.env.Clock.Advance(serverTime)
	d.clock.Advance(waits[len(waits)-1])
}

func (d *deviceRun) exit() int {
	d.t.Helper()
	select {
	case code := <-d.done:
		return code
	case <-time.After(30 * time.Second):
		d.t.Fatalf("device did not finish:\n%s", d.errOut.String())
		return -1
	}
}

func (d *deviceRun) approve(user, action string) {
	d.t.Helper()
	// Typed as a person might: lower case, no hyphen.
	typed := strings.ToLower(strings.ReplaceAll(d.code, "-", ""))
	page, err := d.c.env.Browser(user).Device(context.Background(), typed, action)
	if err != nil || page.Status != 200 {
		d.t.Fatalf("%s at the device page: %v %v", action, page, err)
	}
}

func TestDevicePendingSlowDownApproval(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	d := startDevice(t, c, "--debug", "-o", "json")

	d.poll(5 * time.Second) // on time, nobody approved: authorization_pending
	d.poll(1 * time.Second) // the server sees a poll 1 s later: slow_down
	d.errOut.waitFor(t, regexp.MustCompile(`poll 2: status 400, .*slow_down.*; next poll in 10s`))
	d.approve("frank", "approve")
	d.poll(10 * time.Second)
	if code := d.exit(); code != 0 {
		t.Fatalf("device exit %d:\n%s", code, d.errOut.String())
	}
	// RFC 8628 §3.5: every wait after slow_down is 5 s longer.
	if w := d.clock.Waits(); len(w) != 3 || w[0] != 5*time.Second || w[1] != 5*time.Second || w[2] != 10*time.Second {
		t.Fatalf("poll waits %v: want [5s 5s 10s]", w)
	}
	golden(t, "device-login.json", regexp.MustCompile(`u_[0-9A-Za-z_-]+`).ReplaceAllString(d.out.String(), "u_USER"))
	var res cmdutil.LoginResult
	if err := json.Unmarshal([]byte(d.out.String()), &res); err != nil || res.Storage != "file" {
		t.Fatalf("device -o json: %v %s", err, d.out.String())
	}
	if code, stdout, _ := c.run("ping"); code != 0 || strings.TrimSpace(stdout) != res.User {
		t.Fatalf("ping after device login: %d %q, want user %s", code, stdout, res.User)
	}
}

func TestDeviceDeniedExits4(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := startDevice(t, newCLI(t, env))
	d.approve("gina", "deny")
	d.poll(5 * time.Second)
	if code := d.exit(); code != cmdutil.ExitDenied || !strings.Contains(d.errOut.String(), "denied") {
		t.Fatalf("exit %d, want %d:\n%s", code, cmdutil.ExitDenied, d.errOut.String())
	}
}

func TestDeviceExpiredExits5(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := startDevice(t, newCLI(t, env))
	d.poll(5 * time.Second)
	d.poll(901 * time.Second) // nobody approved within 900 s
	if code := d.exit(); code != cmdutil.ExitExpired || !strings.Contains(d.errOut.String(), "expired") {
		t.Fatalf("exit %d, want %d:\n%s", code, cmdutil.ExitExpired, d.errOut.String())
	}
}

// The box shows the user code and the plain verification URI even though
// the server also sends verification_uri_complete.
func TestDeviceBoxGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := startDevice(t, newCLI(t, env))
	box := d.errOut.String()
	for _, want := range []string{"╭", "Open:  " + env.URL + "/auth/device ", "Enter: " + d.code, "user_code=" + d.code} {
		if !strings.Contains(box, want) {
			t.Errorf("device box lacks %q:\n%s", want, box)
		}
	}
	golden(t, "device-box.txt", strings.ReplaceAll(box, d.code, "ABCD-1234"))
	d.poll(901 * time.Second)
	d.exit()
}

// On a terminal, Enter opens the browser at the complete verification URI;
// the countdown runs on stderr.
func TestDeviceEnterOpensBrowser(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.tty, c.stdin = true, "\n"
	opened := make(chan string, 1)
	c.open = func(u string) error { opened <- u; return nil }
	d := startDevice(t, c)
	select {
	case u := <-opened:
		if u != env.URL+"/auth/device?user_code="+d.code {
			t.Fatalf("opened %s", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Enter did not open the browser:\n%s", d.errOut.String())
	}
	d.approve("hal", "approve")
	d.poll(5 * time.Second)
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, d.errOut.String())
	}
	if !strings.Contains(d.errOut.String(), "Press Enter to open the browser") {
		t.Fatalf("no Enter prompt:\n%s", d.errOut.String())
	}
}

// Not a terminal: no Enter prompt, no countdown, nothing read from stdin.
func TestDeviceNonInteractiveIsQuiet(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = func(u string) error { t.Errorf("browser opened without a terminal: %s", u); return nil }
	d := startDevice(t, c)
	d.poll(901 * time.Second)
	d.exit()
	if s := d.errOut.String(); strings.Contains(s, "Press Enter") || strings.Contains(s, "\r") {
		t.Fatalf("interactive output on a pipe:\n%q", s)
	}
}

// --clipboard runs the first clipboard tool on PATH with the code on its
// stdin, and still prints the code; with none it says so.
func TestDeviceClipboard(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in clipboard tool is a shell script")
	}
	env := servertest.New(t, servertest.Options{})
	bin, clip := t.TempDir(), filepath.Join(t.TempDir(), "clipboard")
	// A stand-in for xclip: the real tools need a display.
	script := "#!/bin/sh\n[ \"$1 $2\" = \"-selection clipboard\" ] || exit 3\n/bin/cat > " + clip + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xclip"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	d := startDevice(t, newCLI(t, env), "--clipboard")
	d.errOut.waitFor(t, regexp.MustCompile(`The code is on the clipboard`))
	if got, _ := os.ReadFile(clip); string(got) != d.code {
		t.Fatalf("clipboard holds %q, want %q", got, d.code)
	}
	d.poll(901 * time.Second)
	d.exit()

	t.Setenv("PATH", t.TempDir())
	d = startDevice(t, newCLI(t, env), "--clipboard")
	d.errOut.waitFor(t, regexp.MustCompile(`no clipboard tool found`))
	if !strings.Contains(d.errOut.String(), "Enter: "+d.code) {
		t.Fatalf("the code is not printed:\n%s", d.errOut.String())
	}
	d.poll(901 * time.Second)
	d.exit()
}
