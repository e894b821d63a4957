package doctor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/cmd/doctor"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/testenv"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// normalise makes a report stable: the temp config dir, entry file hashes
// and (in clitest.Golden) loopback ports and user ids vary between runs.
func normalise(report, dir string) string {
	report = strings.ReplaceAll(report, dir, "$CONFIG")
	return regexp.MustCompile(`tok-[0-9a-f]+\.json`).ReplaceAllString(report, "tok-ID.json")
}

// A machine as it should be: the real Secret Service of
// scripts/with-keyring.sh holding the key of a credential from a real login
// to the reference server, a browser command, no proxy for loopback.
func TestHealthySetup(t *testing.T) {
	bus := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if bus == "" {
		testenv.Missing(t, testenv.SecretService, "DBUS_SESSION_BUS_ADDRESS is unset")
	}
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	delete(c.Vars, "MCPAUTH_STORAGE") // auto: the OS keyring
	c.Vars["DBUS_SESSION_BUS_ADDRESS"] = bus
	c.Open = clitest.ApprovingBrowser(t, env, "alice", "approve")
	mcp := env.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	t.Cleanup(func() { c.Run("logout", mcp) }) // the key lives in the shared test keyring

	c.Vars["MCPAUTH_BROWSER"] = "true" // any command on PATH; doctor only looks it up
	code, stdout, stderr := c.Run("doctor", mcp)
	if code != 0 || stderr != "" {
		t.Fatalf("doctor: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(line, "✓ ") {
			t.Errorf("not a pass: %s", line)
		}
	}
	clitest.Golden(t, "healthy.txt", normalise(stdout, c.Vars["MCPAUTH_CONFIG_DIR"]))
}

// skewDate stands in for a server whose clock is off: it wraps the real
// reference server's handler and only rewrites the Date header.
func skewDate(clk flows.Clock, by time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", clk.Now().Add(by).UTC().Format(http.TimeFormat))
			next.ServeHTTP(w, r)
		})
	}
}

// closedPort is a loopback port nothing listens on any more.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

const childEnv = "MCPAUTH_DOCTOR_TEST_CHILD"

// TestBrokenSetup runs in a child process whose session bus address names
// no socket: go-keyring reads the process's environment and keeps its bus
// connection for the life of the process, so only a process of its own
// has no keyring for every part of doctor at once.
func TestBrokenSetup(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], append(os.Args[1:], "-test.run=^TestBrokenSetup$", "-test.v")...)
		cmd.Env = append(os.Environ(), childEnv+"=1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	clk := flowstest.NewFakeClock(servertest.Start)
	env := servertest.New(t, servertest.Options{Wrap: skewDate(clk, 10*time.Minute)})
	c := clitest.New(t, env)
	c.Clock = clk
	c.Open = clitest.ApprovingBrowser(t, env, "bob", "approve")
	mcp := env.URL + "/mcp"
	dir := c.Vars["MCPAUTH_CONFIG_DIR"]
	if code, _, stderr := c.Run("login", mcp); code != 0 { // file storage: there is no keyring
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "tok-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files after login: %v", files)
	}
	if err := os.Chmod(files[0], 0o644); err != nil {
		t.Fatal(err)
	}
	delete(c.Vars, "MCPAUTH_STORAGE")
	c.Vars["DBUS_SESSION_BUS_ADDRESS"] = os.Getenv("DBUS_SESSION_BUS_ADDRESS")

	down := "http://" + closedPort(t) + "/mcp"
	for _, run := range []struct{ golden, url string }{{"broken_down.txt", down}, {"broken_skew.txt", mcp}} {
		code, stdout, stderr := c.Run("doctor", run.url)
		if code != clierr.ExitFailure || stderr != "" {
			t.Fatalf("doctor %s: exit %d, want %d; stderr %q\n%s", run.url, code, clierr.ExitFailure, stderr, stdout)
		}
		clitest.Golden(t, run.golden, normalise(stdout, dir))
	}

	code, stdout, _ := c.Run("doctor", down, "--output", "json")
	var checks []doctor.Check
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil || code != clierr.ExitFailure {
		t.Fatalf("doctor --output json: exit %d, %v\n%s", code, err, stdout)
	}
	got := map[string]doctor.Status{}
	for _, ch := range checks {
		got[ch.ID] = ch.Status
		if ch.Detail == "" || (ch.Status != doctor.Pass) != (ch.Fix != "") {
			t.Errorf("check %+v: want a detail, and a fix exactly when it does not pass", ch)
		}
	}
	want := map[string]doctor.Status{"token-files": doctor.Fail, "keyring": doctor.Fail, "browser": doctor.Warn,
		"proxy": doctor.Pass, "ca": doctor.Pass, "reach": doctor.Fail, "credential": doctor.Warn}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s: %q, want %q (all: %v)", id, got[id], st, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("checks %v, want exactly %v", got, want)
	}
	checkWidths(t, c, down, checks)
}

// checkWidths runs doctor at 80 and 120 columns: every line fits, but for
// a word (a path, a URL) wider than the line, which stays whole. The
// goldens render checks, this run's, with the config directory normalised
// first: its length, which varies between machines, would move the breaks.
func checkWidths(t *testing.T, c *clitest.CLI, url string, checks []doctor.Check) {
	t.Helper()
	dir := c.Vars["MCPAUTH_CONFIG_DIR"]
	defer delete(c.Vars, "COLUMNS")
	for _, width := range []int{80, 120} {
		c.Vars["COLUMNS"] = strconv.Itoa(width)
		_, stdout, _ := c.Run("doctor", url)
		for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			if lipgloss.Width(line) > width && strings.Contains(strings.TrimSpace(line[len("  "):]), " ") {
				t.Errorf("COLUMNS=%d: a line %d wide:\n%s", width, lipgloss.Width(line), line)
			}
		}
		var b strings.Builder
		for _, ch := range checks {
			ch.Detail, ch.Fix = normalise(ch.Detail, dir), normalise(ch.Fix, dir)
			b.WriteString(doctor.CheckText(ch, width) + "\n")
		}
		clitest.Golden(t, fmt.Sprintf("doctor-%d.txt", width), b.String())
	}
}

// File storage is the documented choice on a machine without a keyring.
// With it chosen, for one command (MCPAUTH_STORAGE=file) or remembered
// (`mcpauth config set storage file`), and no session bus at all (the
// injected environment has neither DBUS_SESSION_BUS_ADDRESS nor
// XDG_RUNTIME_DIR), the missing keyring is information and doctor exits 0.
// A stored API key has no expiry, and nothing is said about one.
func TestFileStorageWithoutABus(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("erin").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := clitest.New(t, env)
	mcp := env.URL + "/mcp"
	c.Stdin = key + "\n"
	if code, _, stderr := c.Run("apikey", "set", mcp); code != 0 {
		t.Fatalf("apikey set: exit %d: %s", code, stderr)
	}
	c.Stdin = ""
	c.Vars["MCPAUTH_BROWSER"] = "true" // any command on PATH; doctor only looks it up
	for _, how := range []string{"MCPAUTH_STORAGE=file", "remembered"} {
		if how == "remembered" {
			delete(c.Vars, "MCPAUTH_STORAGE")
			if code, _, stderr := c.Run("config", "set", "storage", "file"); code != 0 {
				t.Fatalf("config set storage file: exit %d: %s", code, stderr)
			}
		}
		code, stdout, stderr := c.Run("doctor", mcp)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: doctor exit %d, want 0; stderr %q\n%s", how, code, stderr, stdout)
		}
		if !strings.Contains(stdout, "✓ keyring: not needed: ") || !strings.Contains(stdout, "no D-Bus session bus") || strings.Contains(stdout, "✗") {
			t.Errorf("%s: want the missing keyring as information:\n%s", how, stdout)
		}
		if !strings.Contains(stdout, "✓ credential: api_key credential in a plain file for erin (u_") || !strings.Contains(stdout, "): valid, no expiry\n") {
			t.Errorf("%s: the API key's line:\n%s", how, stdout)
		}
		clitest.Golden(t, map[bool]string{true: "file_storage_remembered.txt", false: "file_storage_env.txt"}[how == "remembered"], normalise(stdout, c.Vars["MCPAUTH_CONFIG_DIR"]))
	}
}
