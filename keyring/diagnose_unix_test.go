//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bus address whose socket does not exist is an absent Secret Service,
// not a locked one, and nothing is started in its place.
func TestDiagnoseAbsentBus(t *testing.T) {
	addr := "unix:path=" + filepath.Join(t.TempDir(), "no-such-bus")
	env := osEnv{
		getenv: func(k string) string { return map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr}[k] },
		setenv: func(string, string) error { t.Fatal("setenv called"); return nil },
		stat:   func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist },
	}
	err := diagnoseBus(env)
	if !errors.Is(err, ErrNoSecretService) || errors.Is(err, ErrKeyringLocked) || !strings.Contains(err.Error(), "no-such-bus") {
		t.Fatalf("got %v; want ErrNoSecretService naming the address", err)
	}
	if got := Reason(&UnavailableError{Op: "probe", Cause: err}); got != "no Secret Service" {
		t.Fatalf("Reason = %q", got)
	}
}

// With no bus at all the cause stays ErrNoSessionBus.
func TestDiagnoseNoBus(t *testing.T) {
	env := osEnv{
		getenv: func(string) string { return "" },
		setenv: func(string, string) error { t.Fatal("setenv called"); return nil },
		stat:   func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist },
	}
	if err := diagnoseBus(env); !errors.Is(err, ErrNoSessionBus) {
		t.Fatalf("got %v; want ErrNoSessionBus", err)
	}
}

// The real, unlocked Secret Service of scripts/with-keyring.sh: nothing to
// report.
func TestSecretServiceDiagnoseUnlocked(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		secretServiceUnavailable(t, "DBUS_SESSION_BUS_ADDRESS is unset")
	}
	secretServiceStore(t, t.TempDir()) // skips when it does not answer
	if err := diagnoseBus(processEnv()); err != nil {
		t.Fatalf("unlocked Secret Service diagnosed as %v", err)
	}
}
