// Package keyring is the CLI's credential storage: it keeps sealed bytes
// under (server, account) keys, with a listing index of caller-given
// metadata, per-entry locks, the remembered storage choice, the
// registration cache and the OS keyring backends. It knows nothing of
// what it stores: package creds gives the bytes their meaning.
//
// Layout: a random 256-bit key per entry lives in the OS keyring; the
// entry's bytes live AES-256-GCM-encrypted in a 0600 file under a 0700
// directory.
// Only 50 bytes ever reach the keyring, so bundles of any size work on
// Windows (2560 B) and macOS (~4 KiB) too. The "file" backend stores the
// bundle unencrypted and is only used when the caller opts in: Open never
// falls back to it on its own.
//
// Every keyring call has a timeout, so a locked or absent Secret Service
// yields an error instead of a hung CLI.
package keyring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// Storage selects where new entries are written.
type Storage string

const (
	// StorageAuto uses the OS keyring, or returns an *UnavailableError when
	// it cannot be reached (file storage only if Config.AllowFileFallback).
	StorageAuto Storage = "auto"
	// StorageKeyring requires the OS keyring.
	StorageKeyring Storage = "keyring"
	// StorageFile writes bundles to 0600 files without encryption.
	StorageFile Storage = "file"
	// StorageNone is what Storage reports for a KeyringOptional store
	// opened without a keyring: it saves nothing.
	StorageNone Storage = "none"
)

// ParseStorage parses a --storage flag or env value; "" means auto.
func ParseStorage(s string) (Storage, error) {
	switch Storage(s) {
	case "", StorageAuto:
		return StorageAuto, nil
	case StorageKeyring, StorageFile:
		return Storage(s), nil
	}
	return "", fmt.Errorf("keyring: unknown storage %q (want auto, keyring or file)", s)
}

const (
	DefaultTimeout     = 3 * time.Second // as gh does (cli/cli internal/keyring)
	DefaultLockTimeout = 10 * time.Second
	DefaultServiceName = "mcpauth"
	// DefaultAccount is the account used when none is given; "" and
	// "default" name the same entry.
	DefaultAccount = "default"

	MaxBundleSize    = 1 << 20 // an entry's secret bytes
	maxEntryFileSize = 2 << 20 // base64 ciphertext + envelope
	maxServerLen     = 2048
	maxAccountLen    = 256
)

// Clock is the time source for UpdatedAt stamps.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Config configures Open. The zero value is usable: auto storage in
// DefaultDir with the OS keyring. The package reads no environment
// variables; the caller maps MCPAUTH_CONFIG_DIR and friends onto Dir.
type Config struct {
	Dir     string  // default DefaultDir()
	Storage Storage // default StorageAuto
	// AllowFileFallback lets StorageAuto continue with file storage when the
	// keyring is unavailable. Set it only after the user agreed (prompt, an
	// env var or --storage=file); FallbackReason then reports why.
	AllowFileFallback bool
	// KeyringOptional lets StorageAuto open without a reachable keyring
	// and without the file fallback, for commands that only read or delete
	// (status, token, logout): they have nothing to store, so no reason to
	// ask for plain files. Such a store (Storage() == StorageNone) lists
	// and deletes entries; Save, and Load of a keyring-backed entry, return
	// the keyring error, which FallbackReason reports.
	KeyringOptional bool

	Backend     Backend       // default OSBackend{}
	Timeout     time.Duration // per keyring call; default DefaultTimeout
	LockTimeout time.Duration // wait for the store lock; default DefaultLockTimeout
	ServiceName string        // keyring service prefix; default DefaultServiceName
	Clock       Clock         // default: the system clock
}

// DefaultDir is os.UserConfigDir()/mcpauth/tokens.
func DefaultDir() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("keyring: locate config dir: %w", err)
	}
	return filepath.Join(base, "mcpauth", "tokens"), nil
}

// Store is a credential store rooted at one directory. It is safe for use by
// several goroutines and several processes at once.
type Store struct {
	dir         string
	mode        Storage // StorageKeyring or StorageFile: where Save writes
	fallback    error
	backend     Backend
	timeout     time.Duration
	lockTimeout time.Duration
	service     string
	clock       Clock
}

// Open validates cfg, probes the keyring (unless Storage is file) and
// creates the directory. With StorageKeyring, or StorageAuto without
// AllowFileFallback, an unreachable keyring returns an error matching
// ErrKeyringUnavailable (an *UnavailableError with the cause).
func Open(cfg Config) (*Store, error) {
	mode, err := ParseStorage(string(cfg.Storage))
	if err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 || cfg.LockTimeout < 0 {
		return nil, errors.New("keyring: negative timeout")
	}
	s := &Store{
		dir:         cfg.Dir,
		backend:     cfg.Backend,
		timeout:     orDefault(cfg.Timeout, DefaultTimeout),
		lockTimeout: orDefault(cfg.LockTimeout, DefaultLockTimeout),
		service:     cfg.ServiceName,
		clock:       cfg.Clock,
	}
	if s.backend == nil {
		s.backend = OSBackend{}
	}
	if s.service == "" {
		s.service = DefaultServiceName
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.dir == "" {
		if s.dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}

	switch mode {
	case StorageFile:
		s.mode = StorageFile
	case StorageKeyring:
		if err := s.CheckKeyring(); err != nil {
			return nil, err
		}
		s.mode = StorageKeyring
	case StorageAuto:
		s.mode = StorageKeyring
		if err := s.CheckKeyring(); err != nil {
			switch {
			case cfg.AllowFileFallback:
				s.mode, s.fallback = StorageFile, err
			case cfg.KeyringOptional:
				s.mode, s.fallback = StorageNone, err
			default:
				return nil, err
			}
		}
	}
	if err := ensureDir(s.dir); err != nil {
		return nil, err
	}
	if s.mode == StorageKeyring {
		// Best effort: it is retried by every later Open and every
		// registration write, and a failure must not lock the user out.
		_ = s.migrateRegistrations()
	}
	return s, nil
}

func orDefault(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// Storage reports where Save writes: StorageKeyring or StorageFile, or
// StorageNone for a KeyringOptional store that found no keyring.
func (s *Store) Storage() Storage { return s.mode }

// FallbackReason is the keyring error that made an auto store fall back to
// file storage (or to StorageNone), or nil. The CLI shows it with its
// warning.
func (s *Store) FallbackReason() error { return s.fallback }

// Dir is the directory holding entry files, the index and the caches.
func (s *Store) Dir() string { return s.dir }

// CheckKeyring probes the OS keyring with a Get of an item that should not
// exist: ErrNotFound (or a value) means the keyring answers. Any other error
// or a timeout is returned as an *UnavailableError, whose cause tells a
// locked Secret Service (ErrKeyringLocked) from an absent one
// (ErrNoSessionBus, ErrNoSecretService) where the backend can tell.
func (s *Store) CheckKeyring() error {
	_, err := s.keyGet(s.service+"-probe", "probe")
	if err == nil || errors.Is(err, ErrNotFound) {
		return nil
	}
	d, ok := s.backend.(interface{ diagnose() error })
	if !ok {
		return err
	}
	// Half the timeout: a hung service must not double the wait, and a
	// diagnosis that times out says less than the probe's own error.
	_, derr := keyringCall("probe", s.timeout/2, func() (string, error) { return "", d.diagnose() })
	var te *TimeoutError
	if derr != nil && !errors.As(derr, &te) {
		return derr
	}
	return err
}

func (s *Store) keyGet(service, user string) (string, error) {
	return keyringCall("get", s.timeout, func() (string, error) { return s.backend.Get(service, user) })
}

func (s *Store) keySet(service, user, v string) error {
	_, err := keyringCall("set", s.timeout, func() (string, error) { return "", s.backend.Set(service, user, v) })
	return err
}

func (s *Store) keyDelete(service, user string) error {
	_, err := keyringCall("delete", s.timeout, func() (string, error) { return "", s.backend.Delete(service, user) })
	return err
}

// keyItem names the keyring item holding an entry's key; readable in
// Seahorse / Keychain Access / Credential Manager.
func (s *Store) keyItem(server, account string) (service, user string) {
	return s.service + ":" + server, account
}

func (s *Store) entryFile(server, account string) string {
	return "tok-" + entryID(server, account) + ".json"
}

func (s *Store) lock() (func() error, error) {
	return lockFile(filepath.Join(s.dir, ".lock"), s.lockTimeout)
}

// LockEntry takes an exclusive per-entry lock, independent of the short
// store lock that Save/Load/Delete take. The CLI holds it across
// Load → refresh → Save so two processes never both redeem a rotating
// refresh token. timeout 0 means Config.LockTimeout.
func (s *Store) LockEntry(server, account string, timeout time.Duration) (unlock func() error, err error) {
	account, err = checkNames(server, account)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = s.lockTimeout
	}
	return lockFile(filepath.Join(s.dir, "tok-"+entryID(server, account)+".lock"), timeout)
}

// checkNames validates server and account and maps "" to DefaultAccount.
func checkNames(server, account string) (string, error) {
	if account == "" {
		account = DefaultAccount
	}
	if err := checkName("server", server, maxServerLen); err != nil {
		return "", err
	}
	if err := checkName("account", account, maxAccountLen); err != nil {
		return "", err
	}
	return account, nil
}

func checkName(what, v string, maxLen int) error {
	if v == "" {
		return fmt.Errorf("keyring: empty %s", what)
	}
	if len(v) > maxLen {
		return fmt.Errorf("keyring: %s longer than %d bytes", what, maxLen)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("keyring: %s is not valid UTF-8", what)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("keyring: %s contains a control character", what)
		}
	}
	return nil
}

// Save stores secret for (server, account), replacing any previous entry,
// with the store's backend: sealed with the entry's keyring key, or as-is
// in file mode. meta (a JSON object, or nil) is what List reports for the
// entry, in clear. server is the profile key (the canonical MCP server
// URL); "" as account means DefaultAccount.
func (s *Store) Save(server, account string, secret, meta []byte) error {
	account, err := checkNames(server, account)
	if err != nil {
		return err
	}
	if len(secret) == 0 {
		return fmt.Errorf("keyring: save %q (%s): nothing to store", server, account)
	}
	if len(secret) > MaxBundleSize {
		return fmt.Errorf("keyring: entry is %d bytes, limit %d: %w", len(secret), MaxBundleSize, ErrTooLarge)
	}
	if err := checkMeta(meta); err != nil {
		return err
	}
	if s.mode == StorageNone {
		return fmt.Errorf("keyring: save %q (%s): %w", server, account, s.fallback)
	}
	plain := secret

	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()

	env := envelope{Version: layoutVersion, Backend: s.mode, Server: server, Account: account}
	switch s.mode {
	case StorageKeyring:
		key, err := s.entryKey(server, account)
		if err != nil {
			return fmt.Errorf("keyring: save %q (%s): %w", server, account, err)
		}
		if env.Nonce, env.Ciphertext, err = seal(key, plain, entryAAD(server, account)); err != nil {
			return err
		}
	case StorageFile:
		// An older keyring-backed entry leaves its key in the keyring; it
		// decrypts nothing once the file is replaced, and in file mode the
		// keyring is presumed unreachable anyway.
		env.Bundle = plain
	}
	data, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("keyring: encode entry: %w", err)
	}
	file := s.entryFile(server, account)
	if err := writeFileAtomic(filepath.Join(s.dir, file), data); err != nil {
		return err
	}
	info := EntryInfo{Server: server, Account: account, Backend: s.mode, UpdatedAt: s.clock.Now().UTC()}
	if len(bytes.TrimSpace(meta)) > 0 {
		info.Meta = bytes.Clone(meta)
	}
	return s.updateIndex(func(idx *indexFile) {
		row := indexEntry{EntryInfo: info, File: file}
		if i := findEntry(idx, server, account); i >= 0 {
			idx.Entries[i] = row
		} else {
			idx.Entries = append(idx.Entries, row)
		}
	})
}

// entryKey returns the entry's existing key or creates one. Reusing the key
// across saves means a crash between keyring and file writes never strands
// a file whose key was replaced. Caller holds the store lock.
func (s *Store) entryKey(server, account string) ([]byte, error) {
	return s.storedKey(s.keyItem(server, account))
}

// storedKey returns the key in keyring item (svc, user), creating it when
// missing or unparseable. Caller holds the store lock.
func (s *Store) storedKey(svc, user string) ([]byte, error) {
	v, err := s.keyGet(svc, user)
	switch {
	case err == nil:
		if key, derr := decodeKey(v); derr == nil {
			return key, nil
		}
		// Unparseable item: replace it; nothing can be decrypted with it.
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	if err := s.keySet(svc, user, encodeKey(key)); err != nil {
		return nil, err
	}
	return key, nil
}

// Load returns the bytes stored for (server, account). A missing entry (or a
// missing keyring key) matches ErrNotFound; a corrupt, tampered or swapped
// file matches ErrInvalidEntry; keyring failures match ErrKeyringUnavailable;
// a plain-file entry matches ErrPlaintextEntry unless the store is in file
// mode (StorageFile, or StorageAuto after the consented fallback).
func (s *Store) Load(server, account string) ([]byte, error) {
	return s.load(server, account, s.mode == StorageFile)
}

// LoadToDrop is Load for an entry about to be revoked, or moved into the
// keyring: it reads a plain-file entry whatever the store's mode. Refusing
// plain entries outside file mode keeps a planted token from being used;
// refusing them here would only leave a replaced or logged-out token live
// at its server, or a login stranded in a file after a storage switch.
func (s *Store) LoadToDrop(server, account string) ([]byte, error) {
	return s.load(server, account, true)
}

func (s *Store) load(server, account string, plainOK bool) ([]byte, error) {
	account, err := checkNames(server, account)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()

	env, err := s.readEnvelope(server, account)
	if err != nil {
		return nil, err
	}
	var plain []byte
	switch env.Backend {
	case StorageKeyring:
		if s.mode == StorageNone {
			// Asking again would only repeat the failure, or its timeout.
			return nil, fmt.Errorf("keyring: load %q (%s): %w", server, account, s.fallback)
		}
		v, err := s.keyGet(s.keyItem(server, account))
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("keyring: %q (%s): encryption key missing from the OS keyring: %w", server, account, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("keyring: load %q (%s): %w", server, account, err)
		}
		key, err := decodeKey(v)
		if err != nil {
			return nil, fmt.Errorf("keyring: load %q (%s): %w", server, account, err)
		}
		if plain, err = open(key, env.Nonce, env.Ciphertext, entryAAD(server, account)); err != nil {
			return nil, fmt.Errorf("keyring: load %q (%s): %w", server, account, err)
		}
	case StorageFile:
		// Anyone who can write the tokens folder can plant a plain entry,
		// while a keyring entry only opens with its key. So plain entries
		// are read only by a store the user put in file mode.
		if !plainOK {
			return nil, fmt.Errorf("keyring: %q (%s): %s is a plain-file entry, not protected by the OS keyring; "+
				"not reading it while using the keyring: use --storage=file to read it, or log in again to replace it: %w",
				server, account, filepath.Join(s.dir, s.entryFile(server, account)), ErrPlaintextEntry)
		}
		plain = env.Bundle
	default:
		return nil, fmt.Errorf("keyring: %q (%s): unknown backend: %w", server, account, ErrInvalidEntry)
	}
	return plain, nil
}

// readEnvelope reads and checks an entry file's envelope: its version and
// that it names this (server, account).
func (s *Store) readEnvelope(server, account string) (envelope, error) {
	data, err := readFileBounded(filepath.Join(s.dir, s.entryFile(server, account)), maxEntryFileSize)
	if errors.Is(err, ErrNotFound) {
		return envelope{}, fmt.Errorf("keyring: no entry for %q (%s): %w", server, account, ErrNotFound)
	}
	if err != nil {
		return envelope{}, err
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return envelope{}, fmt.Errorf("keyring: %q (%s): entry file does not decode: %w", server, account, ErrInvalidEntry)
	}
	if env.Version != layoutVersion {
		return envelope{}, fmt.Errorf("keyring: %q (%s): entry has layout version %d, this build reads %d", server, account, env.Version, layoutVersion)
	}
	if env.Server != server || env.Account != account {
		return envelope{}, fmt.Errorf("keyring: %q (%s): entry file belongs to another server or account: %w", server, account, ErrInvalidEntry)
	}
	return env, nil
}

// Delete removes the entry for (server, account): file, index row, then
// the keyring key. It works on corrupt entries too, so it is always a way
// out. A missing entry returns ErrNotFound.
func (s *Store) Delete(server, account string) error {
	account, err := checkNames(server, account)
	if err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()

	env, envErr := s.readEnvelope(server, account)
	rmErr := os.Remove(filepath.Join(s.dir, s.entryFile(server, account)))
	if rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		return fmt.Errorf("keyring: delete %q (%s): %w", server, account, rmErr)
	}
	var row *indexEntry
	if err := s.updateIndex(func(idx *indexFile) {
		if i := findEntry(idx, server, account); i >= 0 {
			r := idx.Entries[i]
			row = &r
			idx.Entries = slices.Delete(idx.Entries, i, i+1)
		}
	}); err != nil {
		return err
	}
	if rmErr != nil && row == nil {
		return fmt.Errorf("keyring: no entry for %q (%s): %w", server, account, ErrNotFound)
	}

	keyBacked := env.Backend == StorageKeyring ||
		(envErr != nil && (row == nil || row.Backend == StorageKeyring))
	if keyBacked && s.mode != StorageNone {
		// The ciphertext is already gone, so a key left behind (keyring
		// unreachable right now) protects nothing and reveals nothing;
		// failing the logout over it would only confuse the user.
		_ = s.keyDelete(s.keyItem(server, account))
	}
	return nil
}
