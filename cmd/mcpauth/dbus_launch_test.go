//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dbusLaunchEnv gates TestNoDBusAutolaunch: the test needs dbus-launch
// (Debian's dbus-x11), which makes every Secret Service client on the
// machine without a session bus spawn orphan daemons, so CI installs it in
// a last step of its own and sets this variable there only.
const dbusLaunchEnv = "MCPAUTH_TEST_DBUS_LAUNCH"

// The helper processes godbus's autolaunch and D-Bus activation start.
var helperNames = []string{"dbus-launch", "dbus-daemon", "gnome-keyring-daemon"}

// Issue 21: with no session bus, every CLI run used to autolaunch one via
// dbus-launch, which then activated gnome-keyring; both outlived the CLI.
// The built binary runs several read commands without
// DBUS_SESSION_BUS_ADDRESS, and afterwards no helper process started on
// its behalf may be alive.
func TestNoDBusAutolaunch(t *testing.T) {
	if os.Getenv(dbusLaunchEnv) != "1" {
		t.Skipf("set %s=1 on a machine with dbus-launch (dbus-x11) to run it", dbusLaunchEnv)
	}
	launch, err := exec.LookPath("dbus-launch")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s=1 and CI=true but dbus-launch is missing: install dbus-x11", dbusLaunchEnv)
		}
		t.Skip("dbus-launch is not installed (apt-get install dbus-x11)")
	}
	t.Logf("dbus-launch: %s", launch)

	dir := t.TempDir()
	bin := buildBinary(t)

	// Helpers inherit the CLI's environment (dbus-launch → dbus-daemon →
	// activated gnome-keyring-daemon), so a marker in it tells ours apart
	// from the buses other tests and sessions on this machine run.
	rnd := make([]byte, 8)
	rand.Read(rnd)
	marker := "MCPAUTH_TEST_DBUS_MARKER=" + hex.EncodeToString(rnd)
	home, runtime := filepath.Join(dir, "home"), filepath.Join(dir, "run")
	for _, d := range []string{home, runtime} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "DBUS_SESSION_BUS_ADDRESS", name == "HOME", name == "DISPLAY", name == "WAYLAND_DISPLAY",
			strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "MCPAUTH_"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env, marker, "HOME="+home, "XDG_RUNTIME_DIR="+runtime, // no bus socket in it
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"MCPAUTH_CONFIG_DIR="+filepath.Join(dir, "tokens"))

	before := helpers(t, marker)
	t.Cleanup(func() { killHelpers(t, marker) })
	totalBefore := helperTotals(t)

	runs := []struct {
		args []string
		code int
		out  string // required in stdout
	}{
		{[]string{"status"}, 0, ""},
		{[]string{"token"}, 3, ""},
		{[]string{"status", "--output", "json"}, 0, "[]"},
	}
	for round := range 2 {
		for _, r := range runs {
			code, stdout, stderr, took := runBin(t, bin, env, r.args...)
			t.Logf("round %d: mcpauth %s: exit %d in %s; stderr: %s", round, strings.Join(r.args, " "), code, took.Round(time.Millisecond), strings.TrimSpace(stderr))
			if code != r.code || !strings.Contains(stdout, r.out) {
				t.Errorf("mcpauth %s: exit %d, stdout %q; want exit %d with %q", strings.Join(r.args, " "), code, stdout, r.code, r.out)
			}
			if took > 10*time.Second {
				t.Errorf("mcpauth %s took %s", strings.Join(r.args, " "), took)
			}
		}
	}
	// An orphan may still be starting (activation is asynchronous).
	time.Sleep(500 * time.Millisecond)
	after := helpers(t, marker)
	t.Logf("all helper processes on the machine: before %v, after %v", totalBefore, helperTotals(t))
	for _, name := range helperNames {
		if after[name] > before[name] {
			t.Errorf("%d %s process(es) left behind by the CLI (%d before)", after[name]-before[name], name, before[name])
		}
	}
}

func runBin(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	start := time.Now()
	code, stdout, stderr = runBinary(t, 60*time.Second, bin, env, args...)
	return code, stdout, stderr, time.Since(start)
}

// procs calls fn with the pid and program name of every helper process.
func procs(t *testing.T, fn func(pid int, name string)) {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading /proc: %v", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a kernel thread
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		name := filepath.Base(string(argv0))
		for _, h := range helperNames {
			if name == h {
				fn(pid, name)
			}
		}
	}
}

func hasMarker(pid int, marker string) bool {
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(environ, []byte{0}) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// helpers counts the helper processes started on behalf of this test.
func helpers(t *testing.T, marker string) map[string]int {
	n := map[string]int{}
	procs(t, func(pid int, name string) {
		if hasMarker(pid, marker) {
			n[name]++
		}
	})
	return n
}

func helperTotals(t *testing.T) map[string]int {
	n := map[string]int{}
	procs(t, func(_ int, name string) { n[name]++ })
	return n
}

// killHelpers ends, by pid, the orphans a failing run left, so the machine
// does not collect them.
func killHelpers(t *testing.T, marker string) {
	procs(t, func(pid int, name string) {
		if hasMarker(pid, marker) {
			t.Logf("killing leftover %s (pid %d)", name, pid)
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	})
}
