package device_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestDevicePendingSlowDownApproval(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	d := clitest.StartDevice(t, c, "--debug", "-o", "json")

	d.Poll(5 * time.Second) // on time, nobody approved: authorization_pending
	d.Poll(1 * time.Second) // the server sees a poll 1 s later: slow_down
	d.ErrOut.WaitFor(t, regexp.MustCompile(`poll 2: status 400, .*slow_down.*; next poll in 10s`))
	d.Approve("frank", "approve")
	d.Poll(10 * time.Second)
	if code := d.Exit(); code != 0 {
		t.Fatalf("device exit %d:\n%s", code, d.ErrOut.String())
	}
	// RFC 8628 §3.5: every wait after slow_down is 5 s longer.
	if w := d.Clock.Waits(); len(w) != 3 || w[0] != 5*time.Second || w[1] != 5*time.Second || w[2] != 10*time.Second {
		t.Fatalf("poll waits %v: want [5s 5s 10s]", w)
	}
	clitest.Golden(t, "device-login.json", regexp.MustCompile(`u_[0-9A-Za-z_-]+`).ReplaceAllString(d.Out.String(), "u_USER"))
	var res cmdutil.LoginResult
	if err := json.Unmarshal([]byte(d.Out.String()), &res); err != nil || res.Storage != "file" {
		t.Fatalf("device -o json: %v %s", err, d.Out.String())
	}
	if code, stdout, _ := c.Run("ping"); code != 0 || strings.TrimSpace(stdout) != res.User {
		t.Fatalf("ping after device login: %d %q, want user %s", code, stdout, res.User)
	}
}

func TestDeviceDeniedExits4(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := clitest.StartDevice(t, clitest.New(t, env))
	d.Approve("gina", "deny")
	d.Poll(5 * time.Second)
	if code := d.Exit(); code != clierr.ExitDenied || !strings.Contains(d.ErrOut.String(), "denied; run: mcpauth device ") {
		t.Fatalf("exit %d, want %d:\n%s", code, clierr.ExitDenied, d.ErrOut.String())
	}
}

func TestDeviceExpiredExits5(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := clitest.StartDevice(t, clitest.New(t, env))
	d.Poll(5 * time.Second)
	d.Poll(901 * time.Second) // nobody approved within 900 s
	if code := d.Exit(); code != clierr.ExitExpired || !strings.Contains(d.ErrOut.String(), "expired") {
		t.Fatalf("exit %d, want %d:\n%s", code, clierr.ExitExpired, d.ErrOut.String())
	}
}

// The box shows the user code and the plain verification URI even though
// the server also sends verification_uri_complete.
func TestDeviceBoxGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	d := clitest.StartDevice(t, clitest.New(t, env))
	box := d.ErrOut.String()
	for _, want := range []string{"╭", "Open:  " + env.URL + "/auth/device ", "Enter: " + d.Code, "user_code=" + d.Code} {
		if !strings.Contains(box, want) {
			t.Errorf("device box lacks %q:\n%s", want, box)
		}
	}
	clitest.Golden(t, "device-box.txt", strings.ReplaceAll(box, d.Code, "ABCD-1234"))
	d.Poll(901 * time.Second)
	d.Exit()
}

// On a terminal, Enter opens the browser at the complete verification URI;
// the countdown runs on stderr.
func TestDeviceEnterOpensBrowser(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.TTY, c.Stdin = true, "\n"
	opened := make(chan string, 1)
	c.Open = func(u string) error { opened <- u; return nil }
	d := clitest.StartDevice(t, c)
	select {
	case u := <-opened:
		if u != env.URL+"/auth/device?user_code="+d.Code {
			t.Fatalf("opened %s", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Enter did not open the browser:\n%s", d.ErrOut.String())
	}
	d.Approve("hal", "approve")
	d.Poll(5 * time.Second)
	if code := d.Exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, d.ErrOut.String())
	}
	if !strings.Contains(d.ErrOut.String(), "Press Enter to open the browser") {
		t.Fatalf("no Enter prompt:\n%s", d.ErrOut.String())
	}
}

// Not a terminal: no Enter prompt, no countdown, nothing read from stdin.
func TestDeviceNonInteractiveIsQuiet(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = func(u string) error { t.Errorf("browser opened without a terminal: %s", u); return nil }
	d := clitest.StartDevice(t, c)
	d.Poll(901 * time.Second)
	d.Exit()
	if s := d.ErrOut.String(); strings.Contains(s, "Press Enter") || strings.Contains(s, "\r") {
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
	d := clitest.StartDevice(t, clitest.New(t, env), "--clipboard")
	d.ErrOut.WaitFor(t, regexp.MustCompile(`The code is on the clipboard`))
	if got, _ := os.ReadFile(clip); string(got) != d.Code {
		t.Fatalf("clipboard holds %q, want %q", got, d.Code)
	}
	d.Poll(901 * time.Second)
	d.Exit()

	t.Setenv("PATH", t.TempDir())
	d = clitest.StartDevice(t, clitest.New(t, env), "--clipboard")
	d.ErrOut.WaitFor(t, regexp.MustCompile(`no clipboard tool found`))
	if !strings.Contains(d.ErrOut.String(), "Enter: "+d.Code) {
		t.Fatalf("the code is not printed:\n%s", d.ErrOut.String())
	}
	d.Poll(901 * time.Second)
	d.Exit()
}
