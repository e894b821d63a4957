package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// maxCASRetries bounds UpdateDeviceCode's retry loop.
const maxCASRetries = 100

const deviceCols = `hash, user_code_hash, client_id, scope, status, user_id,
	interval_ns, last_poll_at, created_at, expires_at, version`

// scanDevice reads a device code and its version.
func scanDevice(row scanner) (store.DeviceCode, int64, error) {
	var d store.DeviceCode
	var status string
	var interval, lastPoll, created, expires, version int64
	err := row.Scan(&d.Hash, &d.UserCodeHash, &d.ClientID, &d.Scope, &status, &d.UserID,
		&interval, &lastPoll, &created, &expires, &version)
	d.Status = store.DeviceStatus(status)
	d.Interval = time.Duration(interval)
	d.LastPollAt, d.CreatedAt, d.ExpiresAt = fromMS(lastPoll), fromMS(created), fromMS(expires)
	return d, version, err
}

// CreateDeviceCode stores d. A record already holding d's hash or user code
// hash blocks it while live; an expired one (ExpiresAt not after d.CreatedAt,
// the caller's now) is replaced, so a user code can be reused before GC runs.
// The transaction is IMMEDIATE on SQLite (see OpenSQLite); on PostgreSQL a
// concurrent insert of the same key fails on the unique index.
func (s *Store) CreateDeviceCode(ctx context.Context, d store.DeviceCode) error {
	defer s.lockWrite()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create device code: %w", err)
	}
	defer tx.Rollback() // no-op after Commit

	if _, err := tx.ExecContext(ctx, s.d.rebind(
		`DELETE FROM device_codes WHERE (hash = ? OR user_code_hash = ?) AND expires_at <= ?`),
		d.Hash, d.UserCodeHash, ms(d.CreatedAt)); err != nil {
		return fmt.Errorf("create device code: drop expired: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO device_codes (`+deviceCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`),
		d.Hash, d.UserCodeHash, d.ClientID, d.Scope, string(d.Status), d.UserID,
		int64(d.Interval), ms(d.LastPollAt), ms(d.CreatedAt), ms(d.ExpiresAt)); err != nil {
		return s.insertErr("create device code", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create device code: commit: %w", err)
	}
	return nil
}

func (s *Store) GetDeviceCode(ctx context.Context, hash string) (store.DeviceCode, error) {
	d, _, err := scanDevice(s.getDeviceCode.QueryRowContext(ctx, hash))
	if err != nil {
		return store.DeviceCode{}, notFound("get device code", err)
	}
	return d, nil
}

func (s *Store) GetDeviceCodeByUserCode(ctx context.Context, userCodeHash string) (store.DeviceCode, error) {
	d, _, err := scanDevice(s.queryRow(ctx, `SELECT `+deviceCols+` FROM device_codes WHERE user_code_hash = ?`, userCodeHash))
	if err != nil {
		return store.DeviceCode{}, notFound("get device code by user code", err)
	}
	return d, nil
}

// UpdateDeviceCode reads the row with its version, calls fn, and writes only
// WHERE version is unchanged; zero rows affected means another writer got
// there first, so it reads again and retries.
func (s *Store) UpdateDeviceCode(ctx context.Context, hash string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	for range maxCASRetries {
		cur, version, err := scanDevice(s.getDeviceCode.QueryRowContext(ctx, hash))
		if err != nil {
			return store.DeviceCode{}, notFound("update device code", err)
		}
		next, err := fn(cur)
		if err != nil {
			return store.DeviceCode{}, err
		}
		next.Hash, next.UserCodeHash = cur.Hash, cur.UserCodeHash
		res, err := s.exec(ctx, `UPDATE device_codes SET client_id = ?, scope = ?, status = ?, user_id = ?,
			interval_ns = ?, last_poll_at = ?, created_at = ?, expires_at = ?, version = version + 1
			WHERE hash = ? AND version = ?`,
			next.ClientID, next.Scope, string(next.Status), next.UserID,
			int64(next.Interval), ms(next.LastPollAt), ms(next.CreatedAt), ms(next.ExpiresAt),
			hash, version)
		if err != nil {
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", err)
		}
		if n == 1 {
			// Return what was stored, at the stored precision.
			next.LastPollAt, next.CreatedAt, next.ExpiresAt = fromMS(ms(next.LastPollAt)), fromMS(ms(next.CreatedAt)), fromMS(ms(next.ExpiresAt))
			return next, nil
		}
	}
	return store.DeviceCode{}, errors.New("update device code: too many concurrent updates")
}
