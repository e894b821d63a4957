package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/internal/testenv"
	"github.com/mcpauth/mcpauth/server/browsertest"
)

// End to end with the real parts: the mcpauth binary as a process (login,
// device, ping) against `mcpauth serve` as a process (SQLite in a temp dir),
// with headless Chromium as the person's browser and, where a Secret Service
// runs (CI: scripts/with-keyring.sh), the OS keyring as token storage.
//
// `mcpauth login --browser-command` runs this test binary again as the
// "browser": with MCPAUTH_E2E_DRIVER set, TestMain drives Chromium through
// sign-in and consent instead of running tests.

const driverEnv = "MCPAUTH_E2E_DRIVER" // approve | deny

// driverLogEnv names the file the driver writes its failure to: login
// discards the browser command's output, so without it a driver that
// stopped half-way leaves only a login that timed out.
const driverLogEnv = "MCPAUTH_E2E_DRIVER_LOG"

func TestMain(m *testing.M) {
	if action := os.Getenv(driverEnv); action != "" {
		os.Exit(drive(action, os.Args[len(os.Args)-1]))
	}
	os.Exit(testenv.Main(m))
}

// drive opens authURL in headless Chromium, signs in at the development
// identity provider, presses action on the consent page and waits until the
// browser has reached the CLI's loopback callback.
func drive(action, authURL string) int {
	fail := func(format string, args ...any) int {
		msg := fmt.Sprintf("e2e driver: "+format+"\n", args...)
		fmt.Fprint(os.Stderr, msg)
		if path := os.Getenv(driverLogEnv); path != "" {
			_ = os.WriteFile(path, []byte(msg), 0o600)
		}
		return 1
	}
	bin, err := browsertest.Lookup()
	if err != nil {
		return fail("%v", err)
	}
	dir, err := os.MkdirTemp("", "mcpauth-driver-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	tab, stop, err := browsertest.Launch(bin, dir)
	if err != nil {
		return fail("%v", err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	steps := []struct {
		what string
		run  func() error
	}{
		{"open " + authURL, func() error { return chromedp.Do(ctx, chromedp.Navigate(authURL)) }},
		{"type the user name", func() error {
			return chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "e2e-user", chromedp.NodeVisible))
		}},
		{"sign in", func() error {
			return chromedp.Do(ctx, browsertest.Click(`button[value=signin]`))
		}},
		{"press " + action, func() error { return chromedp.Do(ctx, browsertest.Click("#"+action)) }},
		{"reach the CLI's callback", func() error {
			var loc string
			for range 100 {
				l, err := chromedp.Run(ctx, chromedp.Location())
				if err == nil && strings.Contains(l, "/callback") {
					return nil
				}
				loc = l
				time.Sleep(100 * time.Millisecond)
			}
			return fmt.Errorf("never left the server: still at %s", loc)
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return fail("%s: %v", s.what, err)
		}
	}
	return 0
}

type e2e struct {
	t         *testing.T
	bin       string
	base      string
	env       []string
	storage   string
	configDir string
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildBinary builds the mcpauth binary once per test run. Every test that
// runs the built binary is end-to-end, so -short skips them here.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test of the built binary: skipped with -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpauth-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "mcpauth")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building mcpauth: %v", buildErr)
	}
	return builtBin
}

// newE2E starts `mcpauth serve` (with serveArgs) and returns the harness.
func newE2E(t *testing.T, serveArgs ...string) *e2e {
	t.Helper()
	browsertest.Require(t)
	e := &e2e{t: t, bin: buildBinary(t), storage: "file", configDir: t.TempDir()}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		e.storage = "keyring" // a Secret Service is there (CI runs inside scripts/with-keyring.sh)
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but no D-Bus session: the end-to-end tests must use the real keyring in CI (scripts/with-keyring.sh)")
	}
	e.env = append(os.Environ(), "MCPAUTH_CONFIG_DIR="+e.configDir, "MCPAUTH_STORAGE="+e.storage)
	e.serve(serveArgs...)
	return e
}

// serve starts `mcpauth serve` (with serveArgs, SQLite in a temp dir) on a
// free loopback port, sets e.base and stops the server when the test ends.
func (e *e2e) serve(serveArgs ...string) {
	t := e.t
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e.base = "http://" + addr
	srv := exec.Command(e.bin, append([]string{"serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "mcpauth.db")}, serveArgs...)...)
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("server output:\n%s", srvOut.String())
		}
	})
	for i := 0; ; i++ {
		if resp, err := http.Get(e.base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 200 {
			t.Fatalf("server did not start:\n%s", srvOut.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// cli runs the mcpauth binary and returns exit code, stdout, stderr.
func (e *e2e) cli(extraEnv []string, args ...string) (int, string, string) {
	e.t.Helper()
	return runBinary(e.t, 60*time.Second, e.bin, append(append([]string(nil), e.env...), extraEnv...), args...)
}

// runBinary runs bin with exactly env, for at most timeout, and returns its
// exit code, stdout and stderr; a binary that cannot start fails the test.
func runBinary(t *testing.T, timeout time.Duration, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	return code, out.String(), errOut.String()
}

// driverEnv makes login run this test binary as its browser, pressing
// action; when the test fails, what the driver reported is logged.
func (e *e2e) driverEnv(action string) []string {
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	logPath := filepath.Join(e.t.TempDir(), "driver.log")
	e.t.Cleanup(func() {
		if b, err := os.ReadFile(logPath); err == nil && e.t.Failed() {
			e.t.Logf("browser driver: %s", b)
		}
	})
	return []string{driverEnv + "=" + action, driverLogEnv + "=" + logPath, "MCPAUTH_BROWSER=" + self}
}

func TestE2ELoginWithChromiumThenPing(t *testing.T) {
	e := newE2E(t)
	code, _, stderr := e.cli(e.driverEnv("approve"), "login", e.base+"/mcp", "--timeout", "60s")
	if code != 0 {
		t.Fatalf("login exit %d:\n%s", code, stderr)
	}
	code, user, stderr := e.cli(nil, "ping")
	if code != 0 || !strings.HasPrefix(user, "u_") {
		t.Fatalf("ping exit %d stdout %q:\n%s", code, user, stderr)
	}
	code, stdout, _ := e.cli(nil, "status", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"backend": "`+e.storage+`"`) {
		t.Fatalf("status: %s", stdout)
	}
	t.Logf("logged in with Chromium, token in %s storage, user %s", e.storage, strings.TrimSpace(user))
}

func TestE2ELoginDeniedInChromium(t *testing.T) {
	e := newE2E(t)
	code, _, stderr := e.cli(e.driverEnv("deny"), "login", e.base+"/mcp", "--timeout", "60s")
	if code != 4 || !strings.Contains(stderr, "denied") {
		t.Fatalf("exit %d, want 4 (denied):\n%s", code, stderr)
	}
}

var userCodeRE = regexp.MustCompile(`Your code: ([A-Z]{4})-([0-9]{4})`)

// startDevice runs `mcpauth device` in the background and returns the code.
func (e *e2e) startDevice() (string, string, func() (int, string)) {
	e.t.Helper()
	cmd := exec.Command(e.bin, "device", e.base+"/mcp")
	cmd.Env = e.env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var buf bytes.Buffer
	var mu sync.Mutex
	found := make(chan []string, 1)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := stderr.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			if m := userCodeRE.FindStringSubmatch(buf.String()); m != nil {
				select {
				case found <- m:
				default:
				}
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() { _ = cmd.Process.Kill() })
	var m []string
	select {
	case m = <-found:
	case <-time.After(20 * time.Second):
		e.t.Fatal("mcpauth device showed no code")
	}
	wait := func() (int, string) {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			e.t.Fatal("mcpauth device did not finish")
		}
		mu.Lock()
		defer mu.Unlock()
		return cmd.ProcessState.ExitCode(), buf.String()
	}
	return m[1], m[2], wait
}

// enterCode types the code at /auth/device in Chromium (lower case, without
// the hyphen: the server must normalise it) and presses action.
func (e *e2e) enterCode(letters, digits, action string) string {
	e.t.Helper()
	ctx := browsertest.Start(e.t, browsertest.Options{Timeout: 40 * time.Second})
	do := func(what string, a chromedp.Action[chromedp.Void]) {
		if err := chromedp.Do(ctx, a); err != nil {
			e.t.Fatalf("%s: %v", what, err)
		}
	}
	do("open /auth/device", chromedp.Navigate(e.base+"/auth/device"))
	do("type user name", chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "e2e-device", chromedp.NodeVisible))
	do("sign in", browsertest.Click(`button[value=signin]`))
	do("type code", chromedp.SendKeys(chromedp.CSS(`#user_code`), strings.ToLower(letters)+digits, chromedp.NodeVisible))
	do("continue", browsertest.Click(`#continue`))
	if action == "" {
		msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#error`), chromedp.NodeVisible))
		if err != nil {
			e.t.Fatalf("wrong code: no error shown: %v", err)
		}
		return msg
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#user-code`), chromedp.NodeVisible))
	if err != nil || strings.TrimSpace(shown) != letters+"-"+digits {
		e.t.Fatalf("confirm page shows %q (%v), want %s-%s", shown, err, letters, digits)
	}
	do("press "+action, browsertest.Click("#"+action))
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#result`), chromedp.NodeVisible))
	if err != nil {
		e.t.Fatal(err)
	}
	return result
}

func TestE2EDeviceFlowInChromium(t *testing.T) {
	e := newE2E(t)
	letters, digits, wait := e.startDevice()
	if msg := e.enterCode("ZZZZ", "0000", ""); !strings.Contains(msg, "not valid") {
		t.Fatalf("wrong code message %q", msg)
	}
	if res := e.enterCode(letters, digits, "approve"); !strings.Contains(res, "connected") {
		t.Fatalf("approval page says %q", res)
	}
	if code, out := wait(); code != 0 {
		t.Fatalf("device exit %d:\n%s", code, out)
	}
	if code, stdout, stderr := e.cli(nil, "ping"); code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping after device: %d %q %s", code, stdout, stderr)
	}
}

func TestE2EDeviceDeniedInChromium(t *testing.T) {
	e := newE2E(t)
	letters, digits, wait := e.startDevice()
	if res := e.enterCode(letters, digits, "deny"); !strings.Contains(strings.ToLower(res), "denied") {
		t.Fatalf("deny page says %q", res)
	}
	if code, out := wait(); code != 4 {
		t.Fatalf("device exit %d, want 4:\n%s", code, out)
	}
}

// With no D-Bus session at all the CLI neither hangs nor writes a plain
// file: it says why and how to opt in, within the keyring timeout.
func TestE2ENoDBusSession(t *testing.T) {
	e := newE2E(t)
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "MCPAUTH_STORAGE=") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
	start := time.Now()
	code, _, stderr := e.cli(nil, "device", e.base+"/mcp")
	if code != 7 || !strings.Contains(stderr, "--storage=file") {
		t.Fatalf("exit %d, want 7 with the opt-in hint:\n%s", code, stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s without a keyring", d)
	}

}

// Open redirect after sign-in (RFC 9700 §4.11): each value is typed into the
// address bar as the raw query, so Chromium does its own encoding and, after
// sign-in, its own URL parsing of the Location (tabs and newlines dropped,
// "\" read as "/"). The page must end on our origin. The browser cannot
// resolve any name but loopback (browsertest), so a failure never leaves
// this machine: it shows as an error page off our origin.
func TestE2EReturnToStaysOnOrigin(t *testing.T) {
	e := newE2E(t)
	bypasses := []string{
		`/%09/evil.example/x`,
		`/%2F%2Fevil.example`,
		`/\evil.example`,
		`/%5Cevil.example`,
		`/%0D%0A//evil.example`,
		`/.%2F/evil.example`,
		`///evil.example`,
		`/%09%09/evil.example`,
		`http:evil.example`,
		`/%09%5C%5Cevil.example`,
		`/%E2%88%95evil.example`, // U+2215 DIVISION SLASH
		`/%EF%BC%8Fevil.example`, // U+FF0F FULLWIDTH SOLIDUS
	}
	ctx := browsertest.Start(t, browsertest.Options{Timeout: 90 * time.Second})
	for _, v := range bypasses {
		if err := chromedp.Do(ctx, chromedp.Navigate(e.base+"/auth/login?return_to="+v)); err != nil {
			t.Fatalf("return_to=%s: open: %v", v, err)
		}
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "redirect-victim", chromedp.NodeVisible)); err != nil {
			t.Fatalf("return_to=%s: sign-in form: %v", v, err)
		}
		if err := chromedp.Do(ctx, browsertest.Click(`button[value=signin]`)); err != nil {
			t.Fatalf("return_to=%s: sign in: %v", v, err)
		}
		// Wait until the browser has left the identity provider and the callback.
		var loc string
		for range 100 {
			l, err := chromedp.Run(ctx, chromedp.Location())
			if err == nil && !strings.Contains(l, "/authorize") && !strings.Contains(l, "/auth/callback") && !strings.Contains(l, "/auth/login") {
				loc = l
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.HasPrefix(loc, e.base+"/") {
			t.Errorf("return_to=%s: after sign-in the browser is at %q, off %s", v, loc, e.base)
		}
	}
}
