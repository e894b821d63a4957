//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/godbus/dbus/v5"
)

// ProbeSecretService tells apart, without ever prompting, the ways the
// Secret Service can be unusable: no session bus (ErrNoSessionBus), a bus
// that does not answer (its connection error), no Secret Service on it
// (ErrNoSecretService), a locked collection (ErrKeyringLocked). nil
// means it answers and is unlocked. The bus address comes from getenv, as
// useSessionBus finds it, on a private connection: a call that fails here
// cannot poison the shared connection go-keyring uses, and no bus is ever
// started. ctx bounds the whole probe.
func ProbeSecretService(ctx context.Context, getenv func(string) string) error {
	addr, err := sessionBusAddress(getenv, os.Stat, os.Getuid())
	if err != nil {
		return err
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("cannot connect to the D-Bus session bus at %s: %w", addr, err)
	}
	defer conn.Close()
	return probeSecrets(ctx, conn, secretsName)
}

// probeSecrets asks the bus for service (a parameter so tests can stand a
// locked one beside the real daemon) and reads its collection's Locked
// property: the login collection, else the default alias, as go-keyring
// picks.
func probeSecrets(ctx context.Context, conn *dbus.Conn, service string) error {
	bus := conn.BusObject()
	var owned bool
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, service).Store(&owned); err != nil {
		return fmt.Errorf("asking the session bus for the Secret Service: %w", err)
	}
	if !owned {
		var names []string
		if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
			return fmt.Errorf("asking the session bus for the Secret Service: %w", err)
		}
		if !slices.Contains(names, service) {
			return fmt.Errorf("%w: nothing owns or can activate %s on the session bus; %s", ErrNoSecretService, service, startHint)
		}
	}
	var lastErr error
	for _, path := range []dbus.ObjectPath{"/org/freedesktop/secrets/collection/login", "/org/freedesktop/secrets/aliases/default"} {
		var locked dbus.Variant
		err := conn.Object(service, path).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0,
			"org.freedesktop.Secret.Collection", "Locked").Store(&locked)
		if err != nil {
			lastErr = err
			continue
		}
		if b, ok := locked.Value().(bool); ok && b {
			return ErrKeyringLocked
		}
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the Secret Service did not answer in time: %w", ctx.Err())
	}
	return fmt.Errorf("the Secret Service has no login or default collection: %w", lastErr)
}
