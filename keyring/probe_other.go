//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package keyring

import (
	"context"
	"errors"
)

// ProbeSecretService is only meaningful where the keyring is the Secret
// Service; elsewhere it returns errors.ErrUnsupported and callers rely on
// RoundTrip.
func ProbeSecretService(context.Context, func(string) string) error {
	return errors.ErrUnsupported
}
