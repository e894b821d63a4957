//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// fakeEnv is an injected process environment for useSessionBus.
type fakeEnv struct {
	vars map[string]string
	set  map[string]string
}

func (f *fakeEnv) osEnv() osEnv {
	f.set = map[string]string{}
	return osEnv{
		getenv: func(k string) string { return f.vars[k] },
		setenv: func(k, v string) error { f.set[k] = v; return nil },
		stat:   os.Stat,
		uid:    4242,
	}
}

// Issue 21: without a session bus address the Secret Service must not be
// asked at all (godbus would autolaunch a bus); an existing user bus socket
// is used instead.
func TestUseSessionBus(t *testing.T) {
	// A real socket: useSessionBus accepts only a socket. The short temp
	// dir keeps the path under the 108-byte sun_path limit.
	withSock, err := os.MkdirTemp("", "bus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(withSock) })
	ln, err := net.Listen("unix", filepath.Join(withSock, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	withFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(withFile, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		vars    map[string]string
		wantErr error
		wantSet string
	}{
		{"address set", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x", "XDG_RUNTIME_DIR": withSock}, nil, ""},
		{"runtime dir socket", map[string]string{"XDG_RUNTIME_DIR": withSock}, nil, "unix:path=" + escapeBusValue(filepath.Join(withSock, "bus"))},
		{"autolaunch: is no address", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "autolaunch:", "XDG_RUNTIME_DIR": withSock}, nil, "unix:path=" + escapeBusValue(filepath.Join(withSock, "bus"))},
		{"nothing", map[string]string{"XDG_RUNTIME_DIR": t.TempDir()}, ErrNoSessionBus, ""},
		{"autolaunch: and nothing", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "autolaunch:", "XDG_RUNTIME_DIR": t.TempDir()}, ErrNoSessionBus, ""},
		{"bus is not a socket", map[string]string{"XDG_RUNTIME_DIR": withFile}, ErrNoSessionBus, ""},
		{"no runtime dir, no /run/user/4242", map[string]string{}, ErrNoSessionBus, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := &fakeEnv{vars: tt.vars}
			err := useSessionBus(fe.osEnv())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := fe.set["DBUS_SESSION_BUS_ADDRESS"]; got != tt.wantSet {
				t.Fatalf("set DBUS_SESSION_BUS_ADDRESS=%q, want %q", got, tt.wantSet)
			}
		})
	}
}

func TestUseSessionBusDefaultRuntimeDir(t *testing.T) {
	fe := &fakeEnv{vars: map[string]string{}}
	env := fe.osEnv()
	var asked string
	env.stat = func(p string) (fs.FileInfo, error) { asked = p; return nil, fs.ErrNotExist }
	if err := useSessionBus(env); !errors.Is(err, ErrNoSessionBus) {
		t.Fatalf("err = %v", err)
	}
	if asked != "/run/user/4242/bus" {
		t.Fatalf("looked for the bus at %q, want /run/user/4242/bus", asked)
	}
}

func TestEscapeBusValue(t *testing.T) {
	if got, want := escapeBusValue("/run/user/1000/my bus,x=y;%"), "/run/user/1000/my%20bus%2cx%3dy%3b%25"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
