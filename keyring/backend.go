package keyring

import (
	"errors"
	"strings"
	"time"

	zkeyring "github.com/zalando/go-keyring"
)

// Backend is the secret store the package keeps its per-entry keys in.
// Implementations return ErrNotFound for a missing item. The Store adds the
// timeout, so a Backend may block.
type Backend interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// OSBackend is the OS keyring via github.com/zalando/go-keyring: Secret
// Service over D-Bus on Linux/BSD, Keychain on macOS, Credential Manager on
// Windows. On Linux/BSD it never starts a session bus (see useSessionBus):
// with none to connect to, every call fails with ErrNoSessionBus.
type OSBackend struct{}

var _ Backend = OSBackend{}

func (OSBackend) Get(service, user string) (string, error) {
	if err := useSessionBus(processEnv()); err != nil {
		return "", err
	}
	v, err := zkeyring.Get(service, user)
	return v, mapOSError(err, "")
}

func (OSBackend) Set(service, user, secret string) error {
	if err := useSessionBus(processEnv()); err != nil {
		return err
	}
	return mapOSError(zkeyring.Set(service, user, secret), secret)
}

func (OSBackend) Delete(service, user string) error {
	if err := useSessionBus(processEnv()); err != nil {
		return err
	}
	return mapOSError(zkeyring.Delete(service, user), "")
}

// mapOSError translates go-keyring's ErrNotFound and, defensively, drops an
// error whose text would echo the secret (none do today; a future backend
// printing its command line must not leak the key into our errors).
func mapOSError(err error, secret string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zkeyring.ErrNotFound):
		return ErrNotFound
	case secret != "" && strings.Contains(err.Error(), secret):
		return errors.New("keyring backend error (message withheld: it contained the secret)")
	}
	return err
}

// keyringCall runs one Backend call in a goroutine and gives up after
// timeout. On timeout the goroutine is left to finish on its own: there is no
// way to cancel a D-Bus or `security` call already in flight, and the CLI
// exits soon after anyway.
func keyringCall(op string, timeout time.Duration, fn func() (string, error)) (string, error) {
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1) // buffered: a late result must not block the goroutine
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		if r.err == nil || errors.Is(r.err, ErrNotFound) {
			return r.v, r.err
		}
		return "", &UnavailableError{Op: op, Cause: r.err}
	case <-t.C:
		return "", &UnavailableError{Op: op, Cause: &TimeoutError{Op: op, Timeout: timeout}}
	}
}
