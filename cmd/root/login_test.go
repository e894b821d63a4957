package root_test

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
	"github.com/mcpauth/mcpauth/server/servertest"
)

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/oauth/authorize\?\S+`)

// startLogin runs `mcpauth login` in the background.
func startLogin(c *cli, args ...string) (*syncBuffer, *syncBuffer, chan int) {
	out, errOut, done := &syncBuffer{}, &syncBuffer{}, make(chan int, 1)
	go func() { done <- c.runWith(out, errOut, append([]string{"login", c.env.URL + "/mcp"}, args...)...) }()
	return out, errOut, done
}

func wait(t *testing.T, done chan int, errOut *syncBuffer) int {
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
	c := newCLI(t, env)
	c.vars["SSH_CONNECTION"] = "192.0.2.1 50000 192.0.2.2 22"
	c.vars["DISPLAY"] = ":0" // SSH alone is reason enough
	_, errOut, done := startLogin(c)
	authURL := errOut.waitFor(t, authURLRE)[0]
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
	if err := approvingBrowser(t, env, "olga", "approve")(authURL); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, done, errOut); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
}

// --no-browser wins over any opener.
func TestLoginNoBrowser(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = func(u string) error { t.Errorf("browser opened despite --no-browser"); return nil }
	_, errOut, done := startLogin(c, "--no-browser", "-o", "json")
	authURL := errOut.waitFor(t, authURLRE)[0]
	approvingBrowser(t, env, "pia", "approve")(authURL)
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
	c := newCLI(t, env)
	c.vars["SSH_TTY"] = "/dev/pts/0"
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
	approvingBrowser(t, env, "quinn", "approve")(authURL)
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
	c := newCLI(t, env)
	c.open = func(string) error { return nil }
	code, _, stderr := c.run("login", env.URL+"/mcp", "--timeout", "300ms")
	if code != cmdutil.ExitExpired {
		t.Fatalf("exit %d, want %d: %s", code, cmdutil.ExitExpired, stderr)
	}
}

// With two servers stored, commands that default to "the only server" ask
// which one, listing both.
func TestAmbiguousServerIsAUsageError(t *testing.T) {
	one, two := servertest.New(t, servertest.Options{}), servertest.New(t, servertest.Options{})
	c := newCLI(t, one)
	for _, env := range []*servertest.Env{one, two} {
		c.open = approvingBrowser(t, env, "rob", "approve")
		if code, _, stderr := c.run("login", env.URL+"/mcp"); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, _, stderr := c.run("token")
	if code != cmdutil.ExitUsage || !strings.Contains(stderr, one.URL+"/mcp") || !strings.Contains(stderr, two.URL+"/mcp") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// A base URL names the server as well as its MCP URL does.
	if code, stdout, _ := c.run("ping", two.URL); code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping %s: %d %q", two.URL, code, stdout)
	}
	// A second account for the same server.
	c.open = approvingBrowser(t, one, "sam", "approve")
	if code, _, stderr := c.run("login", one.URL+"/mcp", "--account", "work"); code != 0 {
		t.Fatal(stderr)
	}
	_, rob, _ := c.run("ping", one.URL)
	_, sam, _ := c.run("ping", one.URL, "--account", "work")
	if rob == sam || !strings.HasPrefix(sam, "u_") {
		t.Fatalf("accounts mixed up: default %q, work %q", rob, sam)
	}
	code, _, stderr = c.run("logout", "--all")
	if code != 0 || strings.Count(stderr, "Logged out of") != 3 {
		t.Fatalf("logout --all: %d %s", code, stderr)
	}
	code, stdout, _ := c.run("status", "-o", "json")
	if code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Fatalf("status after logout --all: %s", stdout)
	}
}

// A server that stops accepting the token: ping exits 3 with the hint.
func TestPingRejectedTokenExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = approvingBrowser(t, env, "tess", "approve")
	if code, _, stderr := c.run("login", env.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	env.Clock.Advance(25 * time.Hour) // the server's clock: the JWT is past exp
	code, stdout, stderr := c.run("ping")
	if code != cmdutil.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "run: mcpauth login") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	c := newCLI(t, nil)
	for _, args := range [][]string{
		{"login"},
		{"login", "http://127.0.0.1:1/mcp", "--bogus"},
		{"status", "-o", "yaml"},
		{"logout", "http://127.0.0.1:1/mcp", "--all"},
		{"completion", "tcsh"},
		{"status", "--storage", "cloud"},
	} {
		if code, _, stderr := c.run(args...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

func TestCompletionOnStdout(t *testing.T) {
	c := newCLI(t, nil)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := c.run("completion", shell)
		if code != 0 || !strings.Contains(stdout, "mcpauth") || stderr != "" {
			t.Errorf("%s: exit %d, %d bytes on stdout, stderr %q", shell, code, len(stdout), stderr)
		}
	}
}

// Unreachable server: exit 6.
func TestUnreachableServerExits6(t *testing.T) {
	c := newCLI(t, nil)
	code, _, stderr := c.run("discover", "http://127.0.0.1:9/mcp")
	if code != cmdutil.ExitNetwork {
		t.Fatalf("exit %d, want %d: %s", code, cmdutil.ExitNetwork, stderr)
	}
	c.vars["MCPAUTH_TOKEN"] = "x"
	if code, _, stderr := c.run("ping", "http://127.0.0.1:9"); code != cmdutil.ExitNetwork {
		t.Fatalf("ping: exit %d, want %d: %s", code, cmdutil.ExitNetwork, stderr)
	}
}
