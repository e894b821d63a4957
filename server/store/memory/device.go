package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpauth/mcpauth/server/store"
)

// CreateDeviceCode stores d. A record already holding d's hash or user code
// hash blocks it while live; an expired one (ExpiresAt not after d.CreatedAt,
// the caller's now) is replaced, so a user code can be reused before GC runs.
func (s *Store) CreateDeviceCode(_ context.Context, d store.DeviceCode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	conflicts := []string{d.Hash}
	if h, ok := s.byUserCode[d.UserCodeHash]; ok {
		conflicts = append(conflicts, h)
	}
	for _, h := range conflicts {
		if old, ok := s.devices[h]; ok && old.d.ExpiresAt.After(d.CreatedAt) {
			return fmt.Errorf("create device code: %w", store.ErrAlreadyExists)
		}
	}
	for _, h := range conflicts {
		s.deleteDevice(h)
	}
	s.devices[d.Hash] = deviceRecord{d: d}
	s.byUserCode[d.UserCodeHash] = d.Hash
	return nil
}

// deleteDevice removes a device code and its user code index. Callers hold mu.
func (s *Store) deleteDevice(hash string) {
	rec, ok := s.devices[hash]
	if !ok {
		return
	}
	delete(s.devices, hash)
	if s.byUserCode[rec.d.UserCodeHash] == hash {
		delete(s.byUserCode, rec.d.UserCodeHash)
	}
}

func (s *Store) GetDeviceCode(_ context.Context, hash string) (store.DeviceCode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := find(s.devices, hash, "get device code")
	return rec.d, err
}

func (s *Store) GetDeviceCodeByUserCode(_ context.Context, userCodeHash string) (store.DeviceCode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := find(s.devices, s.byUserCode[userCodeHash], "get device code by user code")
	return rec.d, err
}

// UpdateDeviceCode calls fn without holding the lock (fn may use the store)
// and writes its result only if the record's version is unchanged.
func (s *Store) UpdateDeviceCode(ctx context.Context, hash string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	for range maxCASRetries {
		if err := ctx.Err(); err != nil {
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", err)
		}
		s.mu.Lock()
		rec, ok := s.devices[hash]
		s.mu.Unlock()
		if !ok {
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", store.ErrNotFound)
		}
		next, err := fn(rec.d)
		if err != nil {
			return store.DeviceCode{}, err
		}
		next.Hash, next.UserCodeHash = rec.d.Hash, rec.d.UserCodeHash

		s.mu.Lock()
		cur, ok := s.devices[hash]
		switch {
		case !ok:
			s.mu.Unlock()
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", store.ErrNotFound)
		case cur.version == rec.version:
			s.devices[hash] = deviceRecord{d: next, version: rec.version + 1}
			s.mu.Unlock()
			return next, nil
		}
		s.mu.Unlock()
	}
	return store.DeviceCode{}, errors.New("update device code: too many concurrent updates")
}
