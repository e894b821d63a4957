//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// useSessionBus runs before every Secret Service call. Without an address
// godbus would autolaunch a bus with dbus-launch, and the Secret Service
// request would then activate gnome-keyring in it: two daemons that outlive
// a CLI run, one more pair per run (issue 21). So it only ever connects to
// a bus that exists: the address from the environment, else the systemd
// user bus socket, which it exports for the process so godbus connects
// there; otherwise it returns ErrNoSessionBus and no process is started.
func useSessionBus(env osEnv) error {
	if addr := env.getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		return nil
	}
	addr, err := sessionBusAddress(env.getenv, env.stat, env.uid)
	if err != nil {
		return err
	}
	return env.setenv("DBUS_SESSION_BUS_ADDRESS", addr)
}

// sessionBusAddress is the bus useSessionBus has go-keyring use: the
// environment's address, else the systemd user bus socket (where godbus
// looks too), else ErrNoSessionBus.
func sessionBusAddress(getenv func(string) string, stat func(string) (fs.FileInfo, error), uid int) (string, error) {
	if addr := getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		return addr, nil
	}
	dir := getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = filepath.Join("/run/user", strconv.Itoa(uid))
	}
	sock := filepath.Join(dir, "bus")
	if fi, err := stat(sock); err != nil || fi.Mode().Type() != fs.ModeSocket {
		return "", ErrNoSessionBus
	}
	return "unix:path=" + escapeBusValue(sock), nil
}

// escapeBusValue escapes a D-Bus address value: every byte outside the
// optionally-escaped set is written as %XX.
func escapeBusValue(v string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-_/.\\*", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// osEnv is the process environment useSessionBus reads and changes,
// injected so tests need not touch the real one.
type osEnv struct {
	getenv func(string) string
	setenv func(string, string) error
	stat   func(string) (fs.FileInfo, error)
	uid    int
}

func processEnv() osEnv {
	return osEnv{getenv: os.Getenv, setenv: os.Setenv, stat: os.Stat, uid: os.Getuid()}
}
