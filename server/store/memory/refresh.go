package memory

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// refreshState holds refresh token families; its maps are made on first
// use. Guarded by Store.mu.
type refreshState struct {
	families map[string]*refreshFamily
	tokens   map[string]store.RefreshToken // token fields only; family fields live in families
}

type refreshFamily struct {
	clientID, userID, scope, resource string
	expiresAt                         time.Time
	revoked                           bool
	hashes                            []string
	// spent is the token the latest rotation spent, successor what it kept.
	spent     string
	successor []byte
}

func (r *refreshState) init() {
	if r.families == nil {
		r.families = map[string]*refreshFamily{}
		r.tokens = map[string]store.RefreshToken{}
	}
}

// get joins a token with its family. Callers hold mu.
func (r *refreshState) get(hash string) (store.RefreshToken, bool) {
	t, ok := r.tokens[hash]
	if !ok {
		return store.RefreshToken{}, false
	}
	f := r.families[t.FamilyID]
	t.ClientID, t.UserID, t.Scope, t.Resource, t.ExpiresAt, t.Revoked = f.clientID, f.userID, f.scope, f.resource, f.expiresAt, f.revoked
	if f.spent == hash {
		t.Successor = bytes.Clone(f.successor)
	}
	return t, true
}

// tokenOnly keeps the fields a token record stores itself.
func tokenOnly(t store.RefreshToken, family string) store.RefreshToken {
	return store.RefreshToken{Hash: t.Hash, FamilyID: family, CreatedAt: t.CreatedAt, TokenID: t.TokenID, TokenExp: t.TokenExp, Used: t.Used, UsedAt: t.UsedAt}
}

func (s *Store) CreateRefreshToken(_ context.Context, t store.RefreshToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.refresh
	r.init()
	if _, ok := r.tokens[t.Hash]; ok {
		return fmt.Errorf("create refresh token: %w", store.ErrAlreadyExists)
	}
	if _, ok := r.families[t.FamilyID]; ok {
		return fmt.Errorf("create refresh token: family: %w", store.ErrAlreadyExists)
	}
	r.families[t.FamilyID] = &refreshFamily{
		clientID: t.ClientID, userID: t.UserID, scope: t.Scope, resource: t.Resource,
		expiresAt: t.ExpiresAt, revoked: t.Revoked, hashes: []string{t.Hash},
	}
	r.tokens[t.Hash] = tokenOnly(t, t.FamilyID)
	return nil
}

func (s *Store) GetRefreshToken(_ context.Context, hash string) (store.RefreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refresh.get(hash)
	if !ok {
		return store.RefreshToken{}, fmt.Errorf("get refresh token: %w", store.ErrNotFound)
	}
	return t, nil
}

func (s *Store) RotateRefreshToken(_ context.Context, hash string, next store.RefreshToken, now time.Time, successor []byte) (store.RefreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.refresh
	cur, ok := r.get(hash)
	if !ok {
		return store.RefreshToken{}, fmt.Errorf("rotate refresh token: %w", store.ErrNotFound)
	}
	if cur.Used || cur.Revoked {
		return cur, fmt.Errorf("rotate refresh token: %w", store.ErrAlreadyUsed)
	}
	if _, ok := r.tokens[next.Hash]; ok {
		return store.RefreshToken{}, fmt.Errorf("rotate refresh token: next: %w", store.ErrAlreadyExists)
	}
	spent := r.tokens[hash]
	spent.Used, spent.UsedAt = true, now
	r.tokens[hash] = spent
	r.tokens[next.Hash] = tokenOnly(next, cur.FamilyID)
	f := r.families[cur.FamilyID]
	f.hashes = append(f.hashes, next.Hash)
	f.spent, f.successor = hash, bytes.Clone(successor)
	cur.Used, cur.UsedAt, cur.Successor = true, now, bytes.Clone(f.successor)
	return cur, nil
}

func (s *Store) RevokeRefreshFamily(_ context.Context, familyID string) ([]store.RevokedToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.refresh.families[familyID]
	if !ok {
		return nil, fmt.Errorf("revoke refresh family: %w", store.ErrNotFound)
	}
	f.revoked, f.successor = true, nil
	var out []store.RevokedToken
	for _, h := range f.hashes {
		t := s.refresh.tokens[h]
		if t.TokenID == "" {
			continue
		}
		if old, ok := s.revoked[t.TokenID]; !ok || t.TokenExp.After(old) {
			s.revoked[t.TokenID] = t.TokenExp
		}
		out = append(out, store.RevokedToken{ID: t.TokenID, ExpiresAt: t.TokenExp})
	}
	return out, nil
}

// gcRefresh drops families past their end whose access tokens have all
// expired, with their tokens. Callers hold mu.
func (s *Store) gcRefresh(now time.Time) int {
	n := 0
	for id, f := range s.refresh.families {
		if !f.expiresAt.Before(now) {
			continue
		}
		live := false
		for _, h := range f.hashes {
			if !s.refresh.tokens[h].TokenExp.Before(now) {
				live = true
				break
			}
		}
		if live {
			continue
		}
		for _, h := range f.hashes {
			delete(s.refresh.tokens, h)
			n++
		}
		delete(s.refresh.families, id)
		n++
	}
	return n
}
