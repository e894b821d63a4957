package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// UpsertUser creates u or updates Name and Subject (CreatedAt stays as first
// stored). A subject belongs to one user: ErrAlreadyExists if another has it.
func (s *Store) UpsertUser(ctx context.Context, u store.User) error {
	_, err := s.exec(ctx, `INSERT INTO users (id, name, subject, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, subject = excluded.subject`,
		u.ID, u.Name, u.Subject, ms(u.CreatedAt))
	if err != nil {
		return s.insertErr("upsert user", err)
	}
	return nil
}

func (s *Store) getUser(ctx context.Context, what, where, arg string) (store.User, error) {
	var u store.User
	var created int64
	err := s.queryRow(ctx, `SELECT id, name, subject, created_at FROM users WHERE `+where+` = ?`, arg).
		Scan(&u.ID, &u.Name, &u.Subject, &created)
	if err != nil {
		return store.User{}, notFound(what, err)
	}
	u.CreatedAt = fromMS(created)
	return u, nil
}

func (s *Store) GetUser(ctx context.Context, id string) (store.User, error) {
	return s.getUser(ctx, "get user", "id", id)
}

func (s *Store) GetUserBySubject(ctx context.Context, subject string) (store.User, error) {
	return s.getUser(ctx, "get user by subject", "subject", subject)
}

const apiKeyCols = `user_id, hash, sealed, created_at`

func scanAPIKey(row scanner) (store.APIKey, error) {
	var k store.APIKey
	var created int64
	err := row.Scan(&k.UserID, &k.Hash, &k.Sealed, &created)
	if len(k.Sealed) == 0 {
		k.Sealed = nil // empty and nil read back alike, as in the memory backend
	}
	k.CreatedAt = fromMS(created)
	return k, err
}

// SetAPIKey is one upsert on user_id, so the old hash is gone the moment the
// new one is visible. ErrAlreadyExists if another user holds the hash.
func (s *Store) SetAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := s.exec(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, sealed = excluded.sealed, created_at = excluded.created_at`,
		k.UserID, k.Hash, k.Sealed, ms(k.CreatedAt))
	if err != nil {
		return s.insertErr("set api key", err)
	}
	return nil
}

func (s *Store) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := scanAPIKey(s.getAPIKeyByHash.QueryRowContext(ctx, hash))
	if err != nil {
		return store.APIKey{}, notFound("get api key", err)
	}
	return k, nil
}

func (s *Store) GetAPIKeyByUser(ctx context.Context, userID string) (store.APIKey, error) {
	k, err := scanAPIKey(s.queryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE user_id = ?`, userID))
	if err != nil {
		return store.APIKey{}, notFound("get api key by user", err)
	}
	return k, nil
}

func (s *Store) ListAPIKeys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var out []store.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

// ResealAPIKey is one conditional UPDATE: it cannot overwrite a key that
// was regenerated since it was read.
func (s *Store) ResealAPIKey(ctx context.Context, userID, hash string, sealed []byte) error {
	return s.updateOne(ctx, "reseal api key", `UPDATE api_keys SET sealed = ? WHERE user_id = ? AND hash = ?`, sealed, userID, hash)
}

// updateOne runs an UPDATE of one row; ErrNotFound when no row matched.
func (s *Store) updateOne(ctx context.Context, what, query string, args ...any) error {
	res, err := s.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// RevokeToken records the jti; revoking again keeps the later expiry.
func (s *Store) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO revoked_tokens (jti, expires_at) VALUES (?, ?)
		ON CONFLICT (jti) DO UPDATE SET expires_at = CASE
			WHEN excluded.expires_at > revoked_tokens.expires_at THEN excluded.expires_at
			ELSE revoked_tokens.expires_at END`,
		jti, ms(exp))
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

func (s *Store) IsTokenRevoked(ctx context.Context, jti string) (bool, error) {
	var one int
	err := s.isTokenRevoked.QueryRowContext(ctx, jti).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("is token revoked: %w", err)
	}
	return true, nil
}

// GetOrCreateSecret inserts gen's value only if the name is still free (ON
// CONFLICT DO NOTHING) and then returns whatever is stored, so concurrent
// callers, on any instance, agree on the first value written.
func (s *Store) GetOrCreateSecret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	v, err := s.getSecret(ctx, name)
	if !errors.Is(err, sql.ErrNoRows) {
		return v, err
	}
	nv, err := gen()
	if err != nil {
		return nil, fmt.Errorf("generate secret %q: %w", name, err)
	}
	if _, err := s.exec(ctx, `INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, nv); err != nil {
		return nil, fmt.Errorf("store secret %q: %w", name, err)
	}
	return s.getSecret(ctx, name)
}

// getSecret returns sql.ErrNoRows unwrapped so the caller can branch on it.
func (s *Store) getSecret(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.queryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("get secret %q: %w", name, err)
	}
	if len(v) == 0 {
		v = nil
	}
	return v, nil
}

// AddCounter is one upsert with RETURNING, atomic on both dialects.
func (s *Store) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	var v int64
	defer s.lockWrite()()
	err := s.queryRow(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value
		RETURNING value`, name, delta).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("add to counter %q: %w", name, err)
	}
	return v, nil
}

// GC implements store.Store.GC; "past" is strict, so a record expiring
// exactly at now survives this round.
func (s *Store) GC(ctx context.Context, now time.Time) (int, error) {
	t := ms(now)
	s.paced.gc(now)
	n := 0
	for _, q := range []struct {
		query string
		args  []any
	}{
		{`DELETE FROM auth_codes WHERE expires_at < ? AND (used = 0 OR token_exp < ?)`, []any{t, t}},
		{`DELETE FROM device_codes WHERE expires_at < ?`, []any{t}},
		{`DELETE FROM revoked_tokens WHERE expires_at < ?`, []any{t}},
		{`DELETE FROM client_metadata_documents WHERE expires_at < ?`, []any{t}},
		{`DELETE FROM clients WHERE used_at = ? AND created_at < ?`, []any{zeroMS, ms(now.Add(-store.UnusedClientLifetime))}},
		// Refresh families past their end whose access tokens have all
		// expired: their tokens, then the families left without any.
		{`DELETE FROM refresh_tokens WHERE family_id IN (
			SELECT f.id FROM refresh_families f WHERE f.expires_at < ? AND NOT EXISTS (
				SELECT 1 FROM refresh_tokens l WHERE l.family_id = f.id AND l.token_exp >= ?))`, []any{t, t}},
		{`DELETE FROM refresh_families WHERE expires_at < ? AND NOT EXISTS (
			SELECT 1 FROM refresh_tokens l WHERE l.family_id = refresh_families.id)`, []any{t}},
	} {
		res, err := s.exec(ctx, q.query, q.args...)
		if err != nil {
			return n, fmt.Errorf("gc: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("gc: %w", err)
		}
		n += int(k)
	}
	return n, nil
}
