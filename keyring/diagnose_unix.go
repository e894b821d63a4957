//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"fmt"
	"slices"

	"github.com/godbus/dbus/v5"
)

const (
	secretsName = "org.freedesktop.secrets"
	startHint   = "start gnome-keyring or another Secret Service in your session, or use --storage=file"
)

// diagnose tells why the Secret Service failed: no bus, no service on it,
// or a locked collection. It connects only to a bus that exists (see
// useSessionBus: never autolaunch) and returns nil when it finds none of
// these, so the caller keeps the original error.
func (OSBackend) diagnose() error { return diagnoseBus(processEnv()) }

func diagnoseBus(env osEnv) error {
	if err := useSessionBus(env); err != nil {
		return err
	}
	addr := env.getenv("DBUS_SESSION_BUS_ADDRESS")
	conn, err := dbus.Connect(addr)
	if err != nil {
		return fmt.Errorf("%w: cannot connect to the session bus at %s (%v); %s", ErrNoSecretService, addr, err, startHint)
	}
	defer conn.Close()
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, secretsName).Store(&owned); err != nil {
		return nil
	}
	if !owned {
		var names []string
		if err := conn.BusObject().Call("org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err == nil && !slices.Contains(names, secretsName) {
			return fmt.Errorf("%w: nothing owns %s on the session bus; %s", ErrNoSecretService, secretsName, startHint)
		}
		return nil // activated on demand: not absent
	}
	// go-keyring uses the login collection, else the default one.
	for _, path := range []dbus.ObjectPath{"/org/freedesktop/secrets/collection/login", "/org/freedesktop/secrets/aliases/default"} {
		v, err := conn.Object(secretsName, path).GetProperty("org.freedesktop.Secret.Collection.Locked")
		if err != nil {
			continue
		}
		if locked, ok := v.Value().(bool); ok && locked {
			return ErrKeyringLocked
		}
		return nil
	}
	return nil
}
