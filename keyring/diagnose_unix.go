//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	secretsName = "org.freedesktop.secrets"
	startHint   = "start gnome-keyring or another Secret Service in your session, or use --storage=file"
	// diagnoseTimeout bounds the bus calls of a diagnosis; the caller
	// bounds the whole of it too (half the keyring timeout).
	diagnoseTimeout = 1500 * time.Millisecond
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
	ctx, cancel := context.WithTimeout(context.Background(), diagnoseTimeout)
	defer cancel()
	// Only the causes the probe can name replace the original error.
	if err := probeSecrets(ctx, conn, secretsName); errors.Is(err, ErrNoSecretService) || errors.Is(err, ErrKeyringLocked) {
		return err
	}
	return nil
}
