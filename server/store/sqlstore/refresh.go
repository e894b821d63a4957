package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// Refresh token families are two tables: the family row carries what the
// tokens share and is the lock that orders a rotation against a revocation
// (both write it first), so that on PostgreSQL a revocation waits for a
// rotation in flight and then sees the token it added. The family row also
// holds what its latest rotation kept, with the hash of the token that
// rotation spent, so keeping one drops the last without another statement.

const refreshCols = `t.hash, t.family_id, f.client_id, f.user_id, f.scope, f.resource, f.expires_at,
	t.created_at, t.token_id, t.token_exp, t.used, t.used_at, f.revoked,
	CASE WHEN f.spent_hash = t.hash THEN f.successor END`

func scanRefresh(row scanner) (store.RefreshToken, error) {
	var r store.RefreshToken
	var expires, created, tokenExp, usedAt int64
	var used, revoked int
	err := row.Scan(&r.Hash, &r.FamilyID, &r.ClientID, &r.UserID, &r.Scope, &r.Resource, &expires,
		&created, &r.TokenID, &tokenExp, &used, &usedAt, &revoked, &r.Successor)
	r.ExpiresAt, r.CreatedAt, r.TokenExp, r.UsedAt = fromMS(expires), fromMS(created), fromMS(tokenExp), fromMS(usedAt)
	r.Used, r.Revoked = used != 0, revoked != 0
	if len(r.Successor) == 0 {
		r.Successor = nil // drivers differ on an empty BLOB
	}
	return r, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inTx runs fn in a transaction (IMMEDIATE on SQLite, under the write lock)
// and commits if fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	defer s.lockWrite()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *Store) txExec(ctx context.Context, tx querier, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, s.d.rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

const insertRefreshToken = `INSERT INTO refresh_tokens (hash, family_id, created_at, token_id, token_exp, used, used_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)`

func (s *Store) CreateRefreshToken(ctx context.Context, t store.RefreshToken) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, `INSERT INTO refresh_families (id, client_id, user_id, scope, resource, expires_at, revoked)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.FamilyID, t.ClientID, t.UserID, t.Scope, t.Resource, ms(t.ExpiresAt), boolInt(t.Revoked)); err != nil {
			return err
		}
		_, err := s.txExec(ctx, tx, insertRefreshToken,
			t.Hash, t.FamilyID, ms(t.CreatedAt), t.TokenID, ms(t.TokenExp), boolInt(t.Used), ms(t.UsedAt))
		return err
	})
	if err != nil {
		return s.insertErr("create refresh token", err)
	}
	return nil
}

func (s *Store) GetRefreshToken(ctx context.Context, hash string) (store.RefreshToken, error) {
	r, err := scanRefresh(s.queryRow(ctx, `SELECT `+refreshCols+`
		FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id WHERE t.hash = ?`, hash))
	if err != nil {
		return store.RefreshToken{}, notFound("get refresh token", err)
	}
	return r, nil
}

// errNotRotated ends a rotation transaction that found nothing to rotate;
// the record as stored then says why.
var errNotRotated = errors.New("not rotated")

// RotateRefreshToken locks the family (an UPDATE that only matches a family
// not revoked, and records what this rotation keeps), then flips used from
// 0 to 1 conditionally, as ConsumeAuthCode does, and inserts the successor,
// all in one transaction: a rotation that fails is rolled back whole.
func (s *Store) RotateRefreshToken(ctx context.Context, hash string, next store.RefreshToken, now time.Time, successor []byte) (store.RefreshToken, error) {
	err := s.grouped(ctx, "refresh:"+hash, func(ctx context.Context, tx querier) error {
		var family string
		err := tx.QueryRowContext(ctx, s.d.rebind(`SELECT family_id FROM refresh_tokens WHERE hash = ?`), hash).Scan(&family)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotRotated
		}
		if err != nil {
			return err
		}
		n, err := s.txExec(ctx, tx, `UPDATE refresh_families SET spent_hash = ?, successor = ? WHERE id = ? AND revoked = 0`,
			hash, successor, family)
		if err != nil || n == 0 {
			return cmp(err, errNotRotated)
		}
		n, err = s.txExec(ctx, tx, `UPDATE refresh_tokens SET used = 1, used_at = ? WHERE hash = ? AND used = 0`, ms(now), hash)
		if err != nil || n == 0 {
			return cmp(err, errNotRotated)
		}
		_, err = s.txExec(ctx, tx, insertRefreshToken,
			next.Hash, family, ms(next.CreatedAt), next.TokenID, ms(next.TokenExp), 0, ms(time.Time{}))
		if err != nil && s.d.uniqueViolation(err) {
			return fmt.Errorf("next: %w", store.ErrAlreadyExists)
		}
		return err
	})
	if err != nil && !errors.Is(err, errNotRotated) {
		return store.RefreshToken{}, fmt.Errorf("rotate refresh token: %w", err)
	}
	cur, gerr := s.GetRefreshToken(ctx, hash)
	if gerr != nil {
		return store.RefreshToken{}, fmt.Errorf("rotate refresh token: %w", gerr)
	}
	if err != nil {
		return cur, fmt.Errorf("rotate refresh token: %w", store.ErrAlreadyUsed)
	}
	return cur, nil
}

// cmp returns err if it is set, else fallback.
func cmp(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// RevokeRefreshFamily marks the family first (waiting, on PostgreSQL, for a
// rotation holding its row), then reads the family's access tokens in a new
// statement, which sees every rotation that committed, and revokes them.
func (s *Store) RevokeRefreshFamily(ctx context.Context, familyID string) ([]store.RevokedToken, error) {
	var out []store.RevokedToken
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil // a retried fn starts afresh
		n, err := s.txExec(ctx, tx, `UPDATE refresh_families SET revoked = 1, successor = NULL WHERE id = ?`, familyID)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		rows, err := tx.QueryContext(ctx, s.d.rebind(`SELECT token_id, token_exp FROM refresh_tokens
			WHERE family_id = ? AND token_id <> '' ORDER BY created_at, hash`), familyID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r store.RevokedToken
			var exp int64
			if err := rows.Scan(&r.ID, &exp); err != nil {
				rows.Close()
				return err
			}
			r.ExpiresAt = fromMS(exp)
			out = append(out, r)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range out {
			if _, err := s.txExec(ctx, tx, `INSERT INTO revoked_tokens (jti, expires_at) VALUES (?, ?)
				ON CONFLICT (jti) DO UPDATE SET expires_at = CASE
					WHEN excluded.expires_at > revoked_tokens.expires_at THEN excluded.expires_at
					ELSE revoked_tokens.expires_at END`, r.ID, ms(r.ExpiresAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("revoke refresh family: %w", err)
	}
	return out, nil
}
