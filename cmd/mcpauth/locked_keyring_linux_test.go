package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/testenv"
)

// Issue 17 (1) against a real, locked gnome-keyring: the first storing
// command asks once, the yes is remembered, and status, token and ping in
// later processes neither ask nor fail. Locking the collection would break
// every other test sharing the keyring, so the test runs itself again
// inside a keyring of its own (a nested scripts/with-keyring.sh).
const lockedChildEnv = "MCPAUTH_LOCKED_KEYRING_CHILD"

// formBrowserEnv makes this test binary the person's browser (see init):
// it signs in at the server whose base URL the variable holds and approves.
const formBrowserEnv = "MCPAUTH_FORM_BROWSER"

func init() {
	base := os.Getenv(formBrowserEnv)
	if base == "" {
		return
	}
	if err := approveInForms(base, os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintf(os.Stderr, "form browser: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// approveInForms drives the server's own pages as a browser without
// scripts does, then follows the redirect to the CLI's loopback callback.
func approveInForms(base, authURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := approve.NewFormApprover(base, "locked-user", nil)
	if err != nil {
		return err
	}
	return a.Browse(ctx, authURL)
}

func TestE2ELockedKeyringChoiceRemembered(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test in a private keyring session: skipped with -short")
	}
	if os.Getenv(lockedChildEnv) == "" {
		runInOwnKeyring(t)
		return
	}
	lockSecretService(t)
	e := &e2e{t: t, bin: buildBinary(t), configDir: t.TempDir()}
	e.serve()
	e.env = []string{"NO_COLOR=1", "MCPAUTH_CONFIG_DIR=" + e.configDir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPAUTH_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			e.env = append(e.env, kv) // the user's own settings stay out
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	browser := []string{"MCPAUTH_BROWSER=" + self, formBrowserEnv + "=" + e.base}
	const prompt = "without keyring protection? [y/N]"

	code, _, shown := onTerminal(t, append(e.env, browser...), "yes\n", e.bin, "login", e.base+"/mcp", "--timeout", "60s")
	if code != 0 || !strings.Contains(shown, prompt) || !strings.Contains(shown, "keyring is locked") || !strings.Contains(shown, "gnome-keyring-daemon --unlock") {
		t.Fatalf("login: exit %d, want 0 after one question naming the locked keyring and how to unlock it:\n%s", code, shown)
	}
	t.Logf("the first login, locked:\n%s", shown)
	// Each a new process, on a terminal where a question could be asked;
	// the typed-ahead "n" would decline one.
	for _, args := range [][]string{{"status"}, {"token"}, {"ping"}} {
		code, stdout, shown := onTerminal(t, e.env, "n\n", e.bin, args...)
		if code != 0 || strings.TrimSpace(stdout) == "" || strings.Contains(shown, "[y/N]") {
			t.Fatalf("%s: exit %d, stdout %q, want 0 and no question:\n%s", args[0], code, stdout, shown)
		}
	}
	code, stdout, stderr := e.cli(nil, "config", "get", "storage")
	if code != 0 || stdout != "file\n" || !strings.Contains(stderr, "Secret Service locked") {
		t.Fatalf("config get storage: exit %d %q %s", code, stdout, stderr)
	}

	// Absent is told apart from locked: a bus address with no socket.
	// (os/exec keeps the last of duplicate variables.)
	absent := append(append(e.env, browser...), "MCPAUTH_CONFIG_DIR="+t.TempDir(), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
	code, _, shown = onTerminal(t, absent, "n\n", e.bin, "login", e.base+"/mcp", "--timeout", "60s")
	if code != 7 || !strings.Contains(shown, "no Secret Service") || !strings.Contains(shown, "/nonexistent/bus") || strings.Contains(shown, "locked") {
		t.Fatalf("absent: exit %d, want 7 naming the missing Secret Service:\n%s", code, shown)
	}
	t.Logf("a login, absent:\n%s", shown)
}

// runInOwnKeyring runs this test again inside a private bus and keyring.
func runInOwnKeyring(t *testing.T) {
	for _, tool := range []string{"dbus-run-session", "dbus-send", "gnome-keyring-daemon", "secret-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, testenv.SecretService, tool+" is not installed")
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "../../scripts/with-keyring.sh", self, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), lockedChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in its own keyring: %v\n%s", err, out)
	}
}

// lockSecretService locks the keyring's login collection, as a screen lock
// or a reboot without auto-unlock leaves it.
func lockSecretService(t *testing.T) {
	conn, err := dbus.Connect(os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	if err != nil {
		t.Fatalf("session bus: %v", err)
	}
	defer conn.Close()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	col := dbus.ObjectPath("/org/freedesktop/secrets/collection/login")
	err = conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{col}).Store(&locked, &prompt)
	if err != nil || len(locked) != 1 {
		t.Fatalf("Lock: %v, locked %v, prompt %s", err, locked, prompt)
	}
}
