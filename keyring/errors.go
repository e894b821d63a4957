package keyring

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotFound means there is no stored entry (or keyring item) for the
	// requested key. Backends return it for a missing item.
	ErrNotFound = errors.New("keyring: not found")

	// ErrKeyringUnavailable matches (errors.Is) every *UnavailableError: the
	// OS keyring could not be reached, was locked, or did not answer in time.
	ErrKeyringUnavailable = errors.New("keyring: OS keyring unavailable")

	// ErrInvalidEntry means a stored entry failed to decode or authenticate:
	// it was corrupted, tampered with, or copied from another (server, account).
	ErrInvalidEntry = errors.New("keyring: stored entry is corrupt or was tampered with")

	// ErrLocked means another process held the store lock for longer than
	// Config.LockTimeout.
	ErrLocked = errors.New("keyring: store is locked by another process")

	// ErrTooLarge means a bundle or registration exceeds the package limits
	// (MaxBundleSize, MaxRegistrationSize).
	ErrTooLarge = errors.New("keyring: value too large")

	// ErrPlaintextEntry means Load found an entry stored as a plain file
	// while the store uses the keyring: it may have been planted, so it is
	// read only with file storage chosen.
	ErrPlaintextEntry = errors.New("keyring: plain-file entry refused")

	// ErrUntrusted (Unix) means a file or folder of the store belongs to
	// another user (not root), is a symbolic link where a lock, index,
	// settings or entry file should be, or is not a regular file: whoever
	// planted it could choose what the CLI reads.
	ErrUntrusted = errors.New("keyring: untrusted file in the token folder")

	// ErrNoSessionBus (Linux/BSD) is the cause of an *UnavailableError when
	// there is no D-Bus session bus to reach the Secret Service over.
	ErrNoSessionBus = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus), " +
		"and mcpauth does not start one: start a session bus, or use --storage=file")

	// ErrNoSecretService (Linux/BSD) is the cause when the session bus
	// cannot be reached or no Secret Service is on it.
	ErrNoSecretService = errors.New("no Secret Service")

	// ErrKeyringLocked (Linux/BSD) is the cause when the Secret Service
	// answers but its collection is locked.
	ErrKeyringLocked = errors.New("the Secret Service is running but its keyring is locked: unlock it in your desktop's keyring app " +
		"(Passwords and Keys), or run `gnome-keyring-daemon --unlock`, type the keyring password and press Ctrl-D")
)

// Reason is a short why for a keyring error, for the remembered storage
// choice ("Secret Service locked").
func Reason(err error) string {
	var te *TimeoutError
	switch {
	case errors.Is(err, ErrKeyringLocked):
		return "Secret Service locked"
	case errors.Is(err, ErrNoSessionBus):
		return "no D-Bus session bus"
	case errors.Is(err, ErrNoSecretService):
		return "no Secret Service"
	case errors.As(err, &te):
		return "OS keyring did not answer"
	}
	return "OS keyring unavailable"
}

// TimeoutError reports a keyring call that did not return within the
// configured timeout. A locked Secret Service waiting on an unseen unlock
// prompt is the usual cause.
type TimeoutError struct {
	Op      string // "get", "set" or "delete"
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("keyring %s timed out after %s (is the Secret Service / keychain locked or not running?)", e.Op, e.Timeout)
}

// UnavailableError is returned when the OS keyring cannot be used. Cause is
// the backend error or a *TimeoutError; it never contains secret values.
type UnavailableError struct {
	Op    string
	Cause error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("OS keyring unavailable (%s): %v", e.Op, e.Cause)
}

func (e *UnavailableError) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, ErrKeyringUnavailable) true for every UnavailableError.
func (e *UnavailableError) Is(target error) bool { return target == ErrKeyringUnavailable }
