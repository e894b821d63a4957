package keyring

import (
	"errors"
	"testing"
	"time"
)

// diagnosingBackend fails like go-keyring against a locked collection and
// then reports what it found; the real locked keyring is staged end to end
// in cmd/mcpauth (TestE2ELockedKeyringChoiceRemembered).
type diagnosingBackend struct {
	failingBackend
	found func() error
}

func (d diagnosingBackend) diagnose() error { return d.found() }

func TestCheckKeyringDiagnosis(t *testing.T) {
	goKeyringErr := errors.New("failed to unlock correct collection '/org/freedesktop/secrets/collection/login'")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for _, tt := range []struct {
		name  string
		found func() error
		want  error
	}{
		{"locked", func() error { return ErrKeyringLocked }, ErrKeyringLocked},
		{"nothing found keeps the probe's error", func() error { return nil }, goKeyringErr},
		{"a hung diagnosis keeps the probe's error", func() error { <-release; return nil }, goKeyringErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(Config{Dir: t.TempDir(), Storage: StorageFile, Timeout: 100 * time.Millisecond,
				Backend: diagnosingBackend{failingBackend{goKeyringErr}, tt.found}})
			if err != nil {
				t.Fatal(err)
			}
			err = s.CheckKeyring()
			if !errors.Is(err, ErrKeyringUnavailable) || !errors.Is(err, tt.want) {
				t.Fatalf("got %v; want an unavailable keyring caused by %v", err, tt.want)
			}
		})
	}
	if got := Reason(&UnavailableError{Op: "probe", Cause: ErrKeyringLocked}); got != "Secret Service locked" {
		t.Fatalf("Reason = %q", got)
	}
}
