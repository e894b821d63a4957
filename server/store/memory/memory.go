// Package memory is an in-memory store.Store for tests and single-instance
// development. Everything is lost on exit. One mutex guards all maps; records
// are copied in and out (slices included) so callers never alias internal
// state.
package memory

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

var _ store.Store = (*Store)(nil)

// maxCASRetries bounds UpdateDeviceCode's retry loop.
const maxCASRetries = 100

type deviceRecord struct {
	d       store.DeviceCode
	version uint64 // bumped on every write; UpdateDeviceCode compares it
}

// Store is the in-memory backend. Use New.
type Store struct {
	mu         sync.Mutex
	clients    map[string]store.Client
	codes      map[string]store.AuthCode
	devices    map[string]deviceRecord
	byUserCode map[string]string // user code hash → device code hash
	users      map[string]store.User
	bySubject  map[string]string // subject → user ID
	keys       map[string]store.APIKey
	keyByHash  map[string]string // key hash → user ID
	revoked    map[string]time.Time
	secrets    map[string][]byte
	counters   map[string]int64
	metadocs   map[string]store.MetadataDocument // by URL; created on first put
	refresh    refreshState                      // refresh.go
}

// New returns an empty store.
func New() *Store {
	return &Store{
		clients:    map[string]store.Client{},
		codes:      map[string]store.AuthCode{},
		devices:    map[string]deviceRecord{},
		byUserCode: map[string]string{},
		users:      map[string]store.User{},
		bySubject:  map[string]string{},
		keys:       map[string]store.APIKey{},
		keyByHash:  map[string]string{},
		revoked:    map[string]time.Time{},
		secrets:    map[string][]byte{},
	}
}

// cloneStrings copies s; an empty slice becomes nil, as in the SQL backend.
func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// cloneBytes copies b; an empty slice becomes nil, as in the SQL backend.
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// find returns m[key], or ErrNotFound wrapped in op; the caller holds the
// lock.
func find[T any](m map[string]T, key, op string) (T, error) {
	v, ok := m[key]
	if !ok {
		var zero T
		return zero, fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return v, nil
}

// reindex points key at id in index, m's unique secondary key → ID map,
// before the caller stores a record under id: ErrAlreadyExists if another
// record holds key, else the key of the record id replaces (old, if
// replaced) is dropped. The caller holds the lock.
func reindex[T any](m map[string]T, index map[string]string, id, key string, keyOf func(T) string) (old T, replaced bool, err error) {
	if owner, ok := index[key]; ok && owner != id {
		return old, false, store.ErrAlreadyExists
	}
	if old, replaced = m[id]; replaced {
		delete(index, keyOf(old))
	}
	index[key] = id
	return old, replaced, nil
}

func cloneClient(c store.Client) store.Client {
	c.RedirectURIs = cloneStrings(c.RedirectURIs)
	c.GrantTypes = cloneStrings(c.GrantTypes)
	c.ResponseTypes = cloneStrings(c.ResponseTypes)
	return c
}

func cloneKey(k store.APIKey) store.APIKey {
	k.Sealed = cloneBytes(k.Sealed)
	return k
}

func (s *Store) CreateClient(_ context.Context, c store.Client) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clients[c.ID]; ok {
		return fmt.Errorf("create client: %w", store.ErrAlreadyExists)
	}
	s.clients[c.ID] = cloneClient(c)
	return nil
}

func (s *Store) GetClient(_ context.Context, id string) (store.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := find(s.clients, id, "get client")
	return cloneClient(c), err
}

func (s *Store) MarkClientUsed(_ context.Context, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := find(s.clients, id, "mark client used")
	if err == nil && c.UsedAt.IsZero() {
		c.UsedAt = at
		s.clients[id] = c
	}
	return err
}

func (s *Store) CreateAuthCode(_ context.Context, c store.AuthCode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.codes[c.Hash]; ok {
		return fmt.Errorf("create auth code: %w", store.ErrAlreadyExists)
	}
	s.codes[c.Hash] = c
	return nil
}

func (s *Store) GetAuthCode(_ context.Context, hash string) (store.AuthCode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return find(s.codes, hash, "get auth code")
}

func (s *Store) ConsumeAuthCode(_ context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.codes[hash]
	if !ok {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", store.ErrNotFound)
	}
	if c.Used {
		return c, fmt.Errorf("consume auth code: %w", store.ErrAlreadyUsed)
	}
	if !c.Matches(r) {
		return c, fmt.Errorf("consume auth code: %w", store.ErrCodeMismatch)
	}
	c.Used, c.UsedAt, c.TokenID, c.TokenExp = true, r.Now, r.TokenID, r.TokenExp
	s.codes[hash] = c
	return c, nil
}
