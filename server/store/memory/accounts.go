package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// UpsertUser creates u or updates Name and Subject (CreatedAt stays as first
// stored). A subject belongs to one user: ErrAlreadyExists if another has it.
func (s *Store) UpsertUser(_ context.Context, u store.User) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, replaced, err := reindex(s.users, s.bySubject, u.ID, u.Subject, func(u store.User) string { return u.Subject })
	if err != nil {
		return fmt.Errorf("upsert user: subject: %w", err)
	}
	if replaced {
		u.CreatedAt = old.CreatedAt
	}
	s.users[u.ID] = u
	return nil
}

func (s *Store) GetUser(_ context.Context, id string) (store.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return find(s.users, id, "get user")
}

func (s *Store) GetUserBySubject(_ context.Context, subject string) (store.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return find(s.users, s.bySubject[subject], "get user by subject")
}

// SetAPIKey replaces the user's key; ErrAlreadyExists if another user holds
// the hash.
func (s *Store) SetAPIKey(_ context.Context, k store.APIKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, err := reindex(s.keys, s.keyByHash, k.UserID, k.Hash, func(k store.APIKey) string { return k.Hash }); err != nil {
		return fmt.Errorf("set api key: %w", err)
	}
	s.keys[k.UserID] = cloneKey(k)
	return nil
}

func (s *Store) GetAPIKeyByHash(_ context.Context, hash string) (store.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[s.keyByHash[hash]]
	if !ok || k.Hash != hash {
		return store.APIKey{}, fmt.Errorf("get api key: %w", store.ErrNotFound)
	}
	return cloneKey(k), nil
}

func (s *Store) GetAPIKeyByUser(_ context.Context, userID string) (store.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := find(s.keys, userID, "get api key by user")
	return cloneKey(k), err
}

func (s *Store) ListAPIKeys(_ context.Context) ([]store.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.APIKey, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, cloneKey(k))
	}
	return out, nil
}

func (s *Store) ResealAPIKey(_ context.Context, userID, hash string, sealed []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[userID]
	if !ok || k.Hash != hash {
		return fmt.Errorf("reseal api key: %w", store.ErrNotFound)
	}
	k.Sealed = cloneBytes(sealed)
	s.keys[userID] = k
	return nil
}

// RevokeToken records the jti; revoking again keeps the later expiry.
func (s *Store) RevokeToken(_ context.Context, jti string, exp time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.revoked[jti]; !ok || exp.After(old) {
		s.revoked[jti] = exp
	}
	return nil
}

func (s *Store) IsTokenRevoked(_ context.Context, jti string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.revoked[jti]
	return ok, nil
}

// GetOrCreateSecret calls gen outside the lock; if another caller stored a
// value meanwhile, that value wins and gen's is discarded.
func (s *Store) GetOrCreateSecret(_ context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	s.mu.Lock()
	v, ok := s.secrets[name]
	s.mu.Unlock()
	if ok {
		return cloneBytes(v), nil
	}
	nv, err := gen()
	if err != nil {
		return nil, fmt.Errorf("generate secret %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.secrets[name]; ok {
		return cloneBytes(v), nil
	}
	s.secrets[name] = cloneBytes(nv)
	return cloneBytes(nv), nil
}

// AddCounter implements store.Store.AddCounter.
func (s *Store) AddCounter(_ context.Context, name string, delta int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counters == nil {
		s.counters = map[string]int64{}
	}
	s.counters[name] += delta
	return s.counters[name], nil
}

// GC implements store.Store.GC; "past" is strict, so a record expiring
// exactly at now survives this round.
func (s *Store) GC(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for h, c := range s.codes {
		if c.ExpiresAt.Before(now) && (!c.Used || c.TokenExp.Before(now)) {
			delete(s.codes, h)
			n++
		}
	}
	for h, rec := range s.devices {
		if rec.d.ExpiresAt.Before(now) {
			s.deleteDevice(h)
			n++
		}
	}
	for jti, exp := range s.revoked {
		if exp.Before(now) {
			delete(s.revoked, jti)
			n++
		}
	}
	for u, d := range s.metadocs {
		if d.ExpiresAt.Before(now) {
			delete(s.metadocs, u)
			n++
		}
	}
	for id, c := range s.clients {
		if c.UsedAt.IsZero() && c.CreatedAt.Add(store.UnusedClientLifetime).Before(now) {
			delete(s.clients, id)
			n++
		}
	}
	n += s.gcRefresh(now)
	return n, nil
}

// Close is a no-op; the maps are left to the garbage collector.
func (s *Store) Close() error { return nil }
