package keyring

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// The registration cache holds OAuth client registrations (RFC 7591
// responses) keyed by (issuer, resource), as opaque JSON so this package
// need not import flows; the CLI adapts it to flows' RegistrationCache.
//
// It is a plain 0600 file, not encrypted: CLI clients are public clients
// (RFC 8252 §8.4) whose registrations hold no secret. A registration that
// does carry a client_secret should be kept in the TokenBundle instead.

const (
	MaxRegistrationSize = 64 << 10
	maxRegistrationFile = 8 << 20
)

type registrationFile struct {
	Version       int                 `json:"version"`
	Registrations []registrationEntry `json:"registrations"`
}

type registrationEntry struct {
	Issuer    string          `json:"issuer"`
	Resource  string          `json:"resource"`
	Data      json.RawMessage `json:"data"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func (s *Store) registrationPath() string { return filepath.Join(s.dir, "registrations.json") }

// readRegistrations returns the cache. A missing, corrupt or newer-layout
// file reads as empty: it is a cache, and the worst outcome is one more
// dynamic registration.
func (s *Store) readRegistrations() registrationFile {
	empty := registrationFile{Version: layoutVersion}
	data, err := readFileBounded(s.registrationPath(), maxRegistrationFile)
	if err != nil {
		return empty
	}
	var rf registrationFile
	if json.Unmarshal(data, &rf) != nil || rf.Version != layoutVersion {
		return empty
	}
	return rf
}

func findRegistration(rf *registrationFile, issuer, resource string) int {
	return slices.IndexFunc(rf.Registrations, func(r registrationEntry) bool {
		return r.Issuer == issuer && r.Resource == resource
	})
}

// GetRegistration returns the cached registration JSON for (issuer,
// resource): the same document that was put, possibly re-indented. It takes
// no lock: the file is only ever replaced by rename.
func (s *Store) GetRegistration(issuer, resource string) ([]byte, bool) {
	rf := s.readRegistrations()
	i := findRegistration(&rf, issuer, resource)
	if i < 0 {
		return nil, false
	}
	return slices.Clone([]byte(rf.Registrations[i].Data)), true
}

// PutRegistration caches data (a JSON document) for (issuer, resource),
// replacing any previous value.
func (s *Store) PutRegistration(issuer, resource string, data []byte) error {
	if issuer == "" {
		return errors.New("keyring: registration needs an issuer")
	}
	if len(data) > MaxRegistrationSize {
		return fmt.Errorf("keyring: registration is %d bytes, limit %d: %w", len(data), MaxRegistrationSize, ErrTooLarge)
	}
	if !json.Valid(data) {
		return errors.New("keyring: registration is not valid JSON")
	}
	row := registrationEntry{Issuer: issuer, Resource: resource, Data: slices.Clone(data), UpdatedAt: s.clock.Now().UTC()}
	return s.updateRegistrations(func(rf *registrationFile) {
		if i := findRegistration(rf, issuer, resource); i >= 0 {
			rf.Registrations[i] = row
		} else {
			rf.Registrations = append(rf.Registrations, row)
		}
	})
}

// DeleteRegistration drops a cached registration, e.g. after the AS
// answered invalid_client or the redirect URI no longer matches. Deleting a
// missing registration is not an error.
func (s *Store) DeleteRegistration(issuer, resource string) error {
	return s.updateRegistrations(func(rf *registrationFile) {
		if i := findRegistration(rf, issuer, resource); i >= 0 {
			rf.Registrations = slices.Delete(rf.Registrations, i, i+1)
		}
	})
}

func (s *Store) updateRegistrations(modify func(*registrationFile)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	rf := s.readRegistrations()
	modify(&rf)
	data, err := json.MarshalIndent(rf, "", "  ")
	if err != nil {
		return fmt.Errorf("keyring: encode registrations: %w", err)
	}
	return writeFileAtomic(s.registrationPath(), data)
}
