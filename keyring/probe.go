package keyring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// RoundTrip writes a random value under a throwaway item, reads it back and
// deletes it: the proof `mcpauth doctor` gives that the keyring is usable,
// beyond CheckKeyring's read of a missing item. Errors are the store's
// (*UnavailableError for keyring failures); the value is never in them.
func (s *Store) RoundTrip() error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("keyring: round trip: %w", err)
	}
	svc, user, want := s.service+"-doctor", "round-trip-"+hex.EncodeToString(b[:4]), hex.EncodeToString(b)
	if err := s.keySet(svc, user, want); err != nil {
		return err
	}
	got, getErr := s.keyGet(svc, user)
	delErr := s.keyDelete(svc, user) // even after a failed read: leave nothing behind
	switch {
	case getErr != nil:
		return getErr
	case got != want:
		return errors.New("keyring: round trip: the value read back differs from the one written")
	}
	return delErr
}
