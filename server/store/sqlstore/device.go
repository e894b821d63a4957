package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
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
	// No poll of a replaced record may cache it again in between.
	mu := s.deviceLocks.lockFor(d.Hash)
	mu.Lock()
	defer mu.Unlock()
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
	s.paced.forget(d.Hash) // a replaced expired record's pacing is not this one's
	return nil
}

func (s *Store) GetDeviceCode(ctx context.Context, hash string) (store.DeviceCode, error) {
	d, _, err := scanDevice(s.getDeviceCode.QueryRowContext(ctx, hash))
	if err != nil {
		return store.DeviceCode{}, notFound("get device code", err)
	}
	return s.withPacing(d), nil
}

func (s *Store) GetDeviceCodeByUserCode(ctx context.Context, userCodeHash string) (store.DeviceCode, error) {
	d, _, err := scanDevice(s.queryRow(ctx, `SELECT `+deviceCols+` FROM device_codes WHERE user_code_hash = ?`, userCodeHash))
	if err != nil {
		return store.DeviceCode{}, notFound("get device code by user code", err)
	}
	return s.withPacing(d), nil
}

// UpdateDeviceCode reads the row with its version, calls fn, and writes only
// WHERE version is unchanged; zero rows affected means another writer got
// there first, so it reads again and retries.
//
// An update that changes only the poll pacing (a poll answered
// authorization_pending or slow_down) is no durable write: losing it in a
// crash only resets pacing, and cannot issue a token, since the status is
// only ever changed by a durable write, which carries the pacing with it.
// Each process keeps the pacing of the codes it was polled for in memory
// (Store.paced), with the row, so the next poll reads no table: on SQLite
// always, on PostgreSQL while the row is trusted (see rowCache). On
// PostgreSQL an instance's first poll of a code, and a slow_down (at most
// one an interval), also write the pacing back (paceShared), so that the
// other instances pace from it: a poll right after one another instance
// answered gets slow_down, and an interval raised anywhere holds
// everywhere (its write is heard of, as a status change is). Polls
// answered from memory otherwise go unseen by the others.
func (s *Store) UpdateDeviceCode(ctx context.Context, hash string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	// Updates of one device code take turns in this process, so the
	// in-memory pacing and the row are read and changed together.
	mu := s.deviceLocks.lockFor(hash)
	mu.Lock()
	defer mu.Unlock()
	for range maxCASRetries {
		// Read before the table: a change heard of after it stops the
		// row read from being trusted (rowCache.set).
		gen := s.paced.generation()
		// A code whose last update only moved its pacing is read from
		// memory: every write to its row goes through here (under the
		// lock above) or CreateDeviceCode and GC, which drop the entry,
		// or, on PostgreSQL, is heard of, which distrusts it.
		_, _, seen := s.paced.pacing(hash)
		cur, version, cached := s.paced.get(hash)
		if !cached {
			var err error
			cur, version, err = scanDevice(s.getDeviceCode.QueryRowContext(ctx, hash))
			if err != nil {
				return store.DeviceCode{}, notFound("update device code", err)
			}
			cur = s.withPacing(cur)
		}
		next, err := fn(cur)
		if err != nil {
			return store.DeviceCode{}, err
		}
		next.Hash, next.UserCodeHash = cur.Hash, cur.UserCodeHash
		if onlyPacingChanged(cur, next) {
			share := s.paced.sharedWith(seen, cur, next)
			if share {
				n, err := affected(s.exec(ctx, paceShared, int64(next.Interval), ms(next.LastPollAt), hash, version))
				if err != nil {
					return store.DeviceCode{}, fmt.Errorf("update device code: pacing: %w", err)
				}
				if n == 0 {
					continue // its status changed meanwhile: read again
				}
			}
			s.paced.set(next, version, gen, share)
			return atStoredPrecision(next), nil
		}
		const update = `UPDATE device_codes SET client_id = ?, scope = ?, status = ?, user_id = ?,
			interval_ns = ?, last_poll_at = ?, created_at = ?, expires_at = ?, version = version + 1
			WHERE hash = ? AND version = ?`
		args := []any{next.ClientID, next.Scope, string(next.Status), next.UserID,
			int64(next.Interval), ms(next.LastPollAt), ms(next.CreatedAt), ms(next.ExpiresAt),
			hash, version}
		// The row is about to change (or may have, if the write fails
		// midway): from now on it is read from the table again.
		s.paced.forget(hash)
		var res sql.Result
		if s.group != nil {
			// A status change (approval, denial, spending): group-committed,
			// the statement prepared outside the group's transaction.
			var st *sql.Stmt
			if st, err = s.prepared(ctx, update); err == nil {
				err = s.groupedStmt(ctx, "device:"+hash, func(ctx context.Context, tx querier) error {
					var perr error
					res, perr = tx.StmtContext(ctx, st).ExecContext(ctx, args...)
					return perr
				})
			}
		} else {
			res, err = s.exec(ctx, update, args...)
		}
		n, err := affected(res, err)
		if err != nil {
			return store.DeviceCode{}, fmt.Errorf("update device code: %w", err)
		}
		if n == 1 {
			return atStoredPrecision(next), nil
		}
	}
	return store.DeviceCode{}, errors.New("update device code: too many concurrent updates")
}

// affected is the number of rows a statement's result changed, or the
// statement's error.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// atStoredPrecision is d as stored: its times in whole milliseconds.
func atStoredPrecision(d store.DeviceCode) store.DeviceCode {
	d.LastPollAt, d.CreatedAt, d.ExpiresAt = fromMS(ms(d.LastPollAt)), fromMS(ms(d.CreatedAt)), fromMS(ms(d.ExpiresAt))
	return d
}

// onlyPacingChanged: next differs from cur at most in LastPollAt and
// Interval.
func onlyPacingChanged(cur, next store.DeviceCode) bool {
	return next.ClientID == cur.ClientID && next.Scope == cur.Scope && next.Status == cur.Status &&
		next.UserID == cur.UserID && next.CreatedAt.Equal(cur.CreatedAt) && next.ExpiresAt.Equal(cur.ExpiresAt)
}

// paceShared writes a poll's pacing for the other instances (PostgreSQL),
// as one autocommit statement whose transaction does not wait for the WAL
// to reach disk (set_config(..., true) is SET LOCAL synchronous_commit =
// off): a crash may lose it, which only resets pacing. The version is
// checked, not moved: a status change since the read matches nothing, and
// a pacing write does not make other instances' copies stale.
const paceShared = `UPDATE device_codes SET interval_ns = ?, last_poll_at = ?
	WHERE hash = ? AND version = ? AND set_config('synchronous_commit', 'off', true) = 'off'`

// withPacing is d with the pacing this process keeps for it, where that is
// later than the row's (another instance may have written the row's since:
// a later poll, a raised interval).
func (s *Store) withPacing(d store.DeviceCode) store.DeviceCode {
	if last, interval, ok := s.paced.pacing(d.Hash); ok {
		if last.After(d.LastPollAt) {
			d.LastPollAt = last
		}
		d.Interval = max(d.Interval, interval)
	}
	return d
}

// deviceLocks make updates of one device code take turns in this process,
// by hash.
type deviceLocks [64]sync.Mutex

func (l *deviceLocks) lockFor(hash string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(hash))
	return &l[h.Sum32()%uint32(len(l))]
}
