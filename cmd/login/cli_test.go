package login_test

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

func TestLoginDeniedExits4(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "bob", "deny")
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != clierr.ExitDenied || !strings.Contains(stderr, "access was denied; run: mcpauth login "+env.URL+"/mcp to try again") {
		t.Fatalf("exit %d, want %d: %s", code, clierr.ExitDenied, stderr)
	}
}

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/oauth/authorize\?\S+`)

// startLogin runs `mcpauth login` in the background.
func startLogin(c *clitest.CLI, args ...string) (*clitest.Buffer, *clitest.Buffer, chan int) {
	out, errOut, done := &clitest.Buffer{}, &clitest.Buffer{}, make(chan int, 1)
	go func() { done <- c.RunWith(out, errOut, append([]string{"login", c.Env.URL + "/mcp"}, args...)...) }()
	return out, errOut, done
}

func wait(t *testing.T, done chan int, errOut *clitest.Buffer) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("login did not finish:\n%s", errOut.String())
		return -1
	}
}

// Over SSH no browser is started: the URL is printed with an ssh -L hint
// for the callback port and the device flow as the alternative. The person
// then opens the printed URL elsewhere.
func TestLoginOverSSHPrintsURLAndHints(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Vars["SSH_CONNECTION"] = "192.0.2.1 50000 192.0.2.2 22"
	c.Vars["DISPLAY"] = ":0" // SSH alone is reason enough
	_, errOut, done := startLogin(c)
	authURL := errOut.WaitFor(t, authURLRE)[0]
	port := regexp.MustCompile(`redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A(\d+)`).FindStringSubmatch(authURL)
	if port == nil {
		t.Fatalf("no loopback redirect in %s", authURL)
	}
	text := errOut.String()
	for _, want := range []string{"SSH session", "ssh -L " + port[1] + ":127.0.0.1:" + port[1] + " ", "mcpauth device " + env.URL + "/mcp"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if err := clitest.ApprovingBrowser(t, env, "olga", "approve")(authURL); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, done, errOut); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
}

// --no-browser wins over any opener.
func TestLoginNoBrowser(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = func(u string) error { t.Errorf("browser opened despite --no-browser"); return nil }
	_, errOut, done := startLogin(c, "--no-browser", "-o", "json")
	authURL := errOut.WaitFor(t, authURLRE)[0]
	clitest.ApprovingBrowser(t, env, "pia", "approve")(authURL)
	if code := wait(t, done, errOut); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
}

// --browser-command runs a program (no shell) with the URL as its last
// argument, even over SSH: the user asked for it.
func TestLoginBrowserCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in browser is a shell script")
	}
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Vars["SSH_TTY"] = "/dev/pts/0"
	dir := t.TempDir()
	got := filepath.Join(dir, "url")
	// A stand-in browser that writes down what it was asked to open.
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$2\" > \"$1.tmp\" && /bin/mv \"$1.tmp\" \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, done := startLogin(c, "--browser-command", script+" "+got, "-o", "json")
	var authURL string
	for i := 0; i < 500 && authURL == ""; i++ {
		b, _ := os.ReadFile(got)
		authURL = string(b)
		time.Sleep(10 * time.Millisecond)
	}
	if !authURLRE.MatchString(authURL) {
		t.Fatalf("the browser command got %q:\n%s", authURL, errOut.String())
	}
	clitest.ApprovingBrowser(t, env, "quinn", "approve")(authURL)
	if code := wait(t, done, errOut); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
	var res cmdutil.LoginResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Resource != env.URL+"/mcp" || res.Issuer != env.URL || !strings.HasPrefix(res.User, "u_") || res.ExpiresAt.IsZero() {
		t.Fatalf("login -o json: %v %s", err, out.String())
	}
}

// The browser never comes back: the login times out with exit 5.
func TestLoginTimeoutExits5(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = func(string) error { return nil }
	code, _, stderr := c.Run("login", env.URL+"/mcp", "--timeout", "300ms")
	if code != clierr.ExitExpired {
		t.Fatalf("exit %d, want %d: %s", code, clierr.ExitExpired, stderr)
	}
}
