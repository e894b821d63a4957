//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestProbeSecretServiceWithoutABus(t *testing.T) {
	ctx := context.Background()
	err := ProbeSecretService(ctx, envOf(map[string]string{"XDG_RUNTIME_DIR": t.TempDir()}))
	if !errors.Is(err, ErrNoSessionBus) {
		t.Fatalf("no address and no bus socket: %v, want ErrNoSessionBus", err)
	}
	err = ProbeSecretService(ctx, envOf(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"}))
	if err == nil || !strings.Contains(err.Error(), "cannot connect to the D-Bus session bus at unix:path=/nonexistent/bus") {
		t.Fatalf("a bus address with no socket: %v", err)
	}
}

// The tests below need the real session bus and gnome-keyring of
// scripts/with-keyring.sh.
func realBus(t *testing.T) *dbus.Conn {
	t.Helper()
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		secretServiceUnavailable(t, "DBUS_SESSION_BUS_ADDRESS is unset")
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		secretServiceUnavailable(t, "cannot connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestSecretServiceProbeUsableAndRoundTrip(t *testing.T) {
	realBus(t)
	if err := ProbeSecretService(context.Background(), os.Getenv); err != nil {
		t.Fatalf("ProbeSecretService on the unlocked test keyring: %v", err)
	}
	s, _ := secretServiceStore(t, t.TempDir())
	if err := s.RoundTrip(); err != nil {
		t.Fatalf("RoundTrip on the real keyring: %v", err)
	}
}

// Locking the shared test keyring would break the keyring tests of other
// packages running at the same time (and unlocking needs a prompt), so a
// stand-in owns a unique name on the real bus and exports a locked login
// collection: only the Locked property is faked, the D-Bus calls are real.
func TestSecretServiceProbeLockedAndAbsent(t *testing.T) {
	owner, client := realBus(t), realBus(t)
	rnd := make([]byte, 4)
	rand.Read(rnd)
	name := "org.mcpauth.Test.LockedSecrets" + hex.EncodeToString(rnd)
	ctx := context.Background()
	if err := probeSecrets(ctx, client, name); !errors.Is(err, ErrNoSecretService) {
		t.Fatalf("before the name is owned: %v, want ErrNoSecretService", err)
	}
	_, err := prop.Export(owner, "/org/freedesktop/secrets/collection/login", prop.Map{
		"org.freedesktop.Secret.Collection": {"Locked": {Value: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := owner.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName: %v %v", reply, err)
	}
	if err := probeSecrets(ctx, client, name); !errors.Is(err, ErrKeyringLocked) {
		t.Fatalf("locked collection: %v, want ErrKeyringLocked", err)
	}
}
