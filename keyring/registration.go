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
// It is a 0600 file in clear: CLI clients are usually public clients (RFC
// 8252 §8.4) whose registrations hold no secret. When a server does issue
// credentials (client_secret, an RFC 7592 registration_access_token), a
// store using the keyring keeps them out of the file: they are sealed with
// AES-256-GCM under one key in the OS keyring, bound to (issuer, resource),
// and merged back on read. Secrets an older build wrote in clear are moved
// the same way when a keyring store opens. Only file mode, which the user
// chose for tokens too, writes them in clear.

const (
	MaxRegistrationSize = 64 << 10
	maxRegistrationFile = 8 << 20
)

type registrationFile struct {
	Version       int                 `json:"version"`
	Registrations []registrationEntry `json:"registrations"`
}

type registrationEntry struct {
	Issuer   string          `json:"issuer"`
	Resource string          `json:"resource"`
	Data     json.RawMessage `json:"data"` // without the secret members when Sealed is set
	// Sealed holds the secret members of Data as an encrypted JSON object.
	Sealed    *sealedSecrets `json:"sealed,omitempty"`
	UpdatedAt time.Time      `json:"updated_at"`
}

type sealedSecrets struct {
	Nonce      []byte `json:"nonce"`
	Ciphertext []byte `json:"ciphertext"`
}

// isSecretMember reports whether a top-level member of a registration is
// a credential that must not be written in clear.
func isSecretMember(name string) bool {
	return name == "client_secret" || name == "registration_access_token"
}

// registrationKeyItem is the keyring item holding the key that seals
// registration secrets.
func (s *Store) registrationKeyItem() (service, user string) {
	return s.service + "-registrations", "client-secrets"
}

func registrationAAD(issuer, resource string) []byte {
	return lengthPrefixed(fmt.Sprintf("mcpauth/keyring/registration/v%d\x00", layoutVersion), issuer, resource)
}

// splitSecrets takes the secret members out of a registration document.
// secrets is nil when there are none (or data is not a JSON object), and
// data is then returned unchanged.
func splitSecrets(data []byte) (public, secrets []byte, err error) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil {
		return data, nil, nil
	}
	sec := map[string]json.RawMessage{}
	for k, v := range doc {
		if isSecretMember(k) {
			sec[k] = v
			delete(doc, k)
		}
	}
	if len(sec) == 0 {
		return data, nil, nil
	}
	if public, err = json.Marshal(doc); err != nil {
		return nil, nil, fmt.Errorf("keyring: encode registration: %w", err)
	}
	if secrets, err = json.Marshal(sec); err != nil {
		return nil, nil, fmt.Errorf("keyring: encode registration secrets: %w", err)
	}
	return public, secrets, nil
}

// mergeSecrets puts the members of the secrets object back into public.
func mergeSecrets(public, secrets []byte) ([]byte, error) {
	var doc, sec map[string]json.RawMessage
	if err := json.Unmarshal(public, &doc); err != nil {
		return nil, fmt.Errorf("keyring: registration does not decode: %w", ErrInvalidEntry)
	}
	if err := json.Unmarshal(secrets, &sec); err != nil {
		return nil, fmt.Errorf("keyring: registration secrets do not decode: %w", ErrInvalidEntry)
	}
	if doc == nil {
		doc = map[string]json.RawMessage{}
	}
	for k, v := range sec {
		doc[k] = v
	}
	return json.Marshal(doc)
}

// sealClearSecrets moves every secret member still in clear into its
// entry's sealed object, creating the keyring key on first use. Caller
// holds the store lock. On error nothing is to be written: a secret must
// not stay in clear because the keyring failed.
func (s *Store) sealClearSecrets(rf *registrationFile) error {
	var key []byte
	for i := range rf.Registrations {
		r := &rf.Registrations[i]
		public, secrets, err := splitSecrets(r.Data)
		if err != nil {
			return err
		}
		if secrets == nil {
			continue
		}
		if key == nil {
			if key, err = s.storedKey(s.registrationKeyItem()); err != nil {
				return fmt.Errorf("keyring: seal the client secret of %s: %w", r.Issuer, err)
			}
		}
		// A clear secret is the newer one: an older build rewriting the
		// file would have dropped any sealed object.
		nonce, ct, err := seal(key, secrets, registrationAAD(r.Issuer, r.Resource))
		if err != nil {
			return err
		}
		r.Data, r.Sealed = public, &sealedSecrets{Nonce: nonce, Ciphertext: ct}
	}
	return nil
}

// openSecrets returns r's document with its sealed secrets merged back.
func (s *Store) openSecrets(r registrationEntry) ([]byte, error) {
	if r.Sealed == nil {
		return r.Data, nil
	}
	if s.mode != StorageKeyring {
		// File mode never touches the keyring; without one it cannot open.
		return nil, fmt.Errorf("keyring: registration secrets are sealed with the OS keyring, which this store does not use: %w", ErrNotFound)
	}
	v, err := s.keyGet(s.registrationKeyItem())
	if err != nil {
		return nil, err
	}
	key, err := decodeKey(v)
	if err != nil {
		return nil, err
	}
	secrets, err := open(key, r.Sealed.Nonce, r.Sealed.Ciphertext, registrationAAD(r.Issuer, r.Resource))
	if err != nil {
		return nil, err
	}
	return mergeSecrets(r.Data, secrets)
}

// migrateRegistrations seals secrets an older build left in clear.
func (s *Store) migrateRegistrations() error {
	rf := s.readRegistrations()
	for _, r := range rf.Registrations {
		if _, secrets, _ := splitSecrets(r.Data); secrets != nil {
			return s.updateRegistrations(func(*registrationFile) {})
		}
	}
	return nil
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
// resource): the same members that were put, possibly reordered and
// re-indented. It takes no lock: the file is only ever replaced by rename.
// A registration whose secrets cannot be unsealed (keyring unavailable,
// key gone, tampered) is a miss: the worst outcome is a new registration.
func (s *Store) GetRegistration(issuer, resource string) ([]byte, bool) {
	rf := s.readRegistrations()
	i := findRegistration(&rf, issuer, resource)
	if i < 0 {
		return nil, false
	}
	data, err := s.openSecrets(rf.Registrations[i])
	if err != nil {
		return nil, false
	}
	return slices.Clone(data), true
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
	if s.mode != StorageFile {
		if err := s.sealClearSecrets(&rf); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(rf, "", "  ")
	if err != nil {
		return fmt.Errorf("keyring: encode registrations: %w", err)
	}
	return writeFileAtomic(s.registrationPath(), data)
}
