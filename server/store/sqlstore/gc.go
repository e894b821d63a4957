package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// GC deletes in batches. On SQLite every statement holds the only write
// lock (writeMu): one DELETE of a million expired device flows held it for
// 3–5 s (BENCHMARKS.md), every write waiting behind it. A batch holds it for
// milliseconds, and a write queued meanwhile takes it before the next batch
// (sync.Mutex hands itself to a waiter starved for over 1 ms). PostgreSQL
// has no such lock: nothing waits for a DELETE of expired rows, and one
// statement collected a million device flows in 0.7 s where batches of
// 2,000 took 13 s (BENCHMARKS.md), so there each table is one statement
// (gcBatchRows 0) unless a test asks for batches.
const (
	gcBatchRows = 2000
	// gcMaxBatches bounds one run per table (2 million rows); what is left
	// waits for the next run, so a run always ends.
	gcMaxBatches = 1000
)

// gcTarget is one kind of record GC deletes: the rows of table matching
// where, found by key (their primary key), taken in the order of an
// indexed column, so that each batch is an index range scan that stops
// after its rows whatever the planner's statistics say (after a bulk
// insert PostgreSQL chose a sequential scan, which reads the rows earlier
// batches deleted again, until they are vacuumed).
type gcTarget struct {
	table, key, where, order string
	args                     []any
}

// GC implements store.Store.GC; "past" is strict, so a record expiring
// exactly at now survives this round.
func (s *Store) GC(ctx context.Context, now time.Time) (int, error) {
	t := ms(now)
	s.paced.gc(now)
	exec := s.exec
	if s.writeMu == nil && s.gcBatchRows > 0 {
		// PostgreSQL: every batch on one connection. Taking one for each
		// batch queued GC behind every poll waiting for a connection. (Not
		// on SQLite, whose writes wait for writeMu, not a connection, and
		// whose in-memory store has a single one.)
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return 0, fmt.Errorf("gc: %w", err)
		}
		defer conn.Close()
		exec = func(ctx context.Context, query string, args ...any) (sql.Result, error) {
			return conn.ExecContext(ctx, s.d.rebind(query), args...)
		}
	}
	n := 0
	for _, g := range []gcTarget{
		{"auth_codes", "hash", `expires_at < ? AND (used = 0 OR token_exp < ?)`, "expires_at", []any{t, t}},
		{"device_codes", "hash", `expires_at < ?`, "expires_at", []any{t}},
		{"revoked_tokens", "jti", `expires_at < ?`, "expires_at", []any{t}},
		{"client_metadata_documents", "url", `expires_at < ?`, "expires_at", []any{t}},
		{"clients", "id", `used_at = ? AND created_at < ?`, "created_at", []any{zeroMS, ms(now.Add(-store.UnusedClientLifetime))}},
		// Refresh families past their end whose access tokens have all
		// expired: their tokens, then the families left without any.
		{"refresh_tokens", "hash", `family_id IN (
			SELECT f.id FROM refresh_families f WHERE f.expires_at < ? AND NOT EXISTS (
				SELECT 1 FROM refresh_tokens l WHERE l.family_id = f.id AND l.token_exp >= ?))`, "family_id", []any{t, t}},
		{"refresh_families", "id", `expires_at < ? AND NOT EXISTS (
			SELECT 1 FROM refresh_tokens l WHERE l.family_id = refresh_families.id)`, "expires_at", []any{t}},
	} {
		k, err := s.deleteInBatches(ctx, exec, g)
		n += k
		if err != nil {
			return n, fmt.Errorf("gc %s: %w", g.table, err)
		}
	}
	return n, nil
}

// execFunc runs a write written with "?" placeholders, as Store.exec does.
type execFunc func(ctx context.Context, query string, args ...any) (sql.Result, error)

// deleteInBatches deletes g's rows, at most s.gcBatchRows a statement, each
// statement under the write lock on its own, until a batch finds fewer or
// s.gcMaxBatches have run; with gcBatchRows 0, in one statement. The outer WHERE repeats g's condition: on
// PostgreSQL a row changed by a concurrent write after the batch picked it
// (a client used just now) is deleted only if it still matches, as it was
// when this was one statement.
func (s *Store) deleteInBatches(ctx context.Context, exec execFunc, g gcTarget) (int, error) {
	if s.gcBatchRows == 0 {
		res, err := exec(ctx, `DELETE FROM `+g.table+` WHERE `+g.where, g.args...)
		if err != nil {
			return 0, err
		}
		k, err := res.RowsAffected()
		return int(k), err
	}
	query := `DELETE FROM ` + g.table + ` WHERE ` + g.key + ` IN (SELECT ` + g.key + ` FROM ` + g.table +
		` WHERE ` + g.where + ` ORDER BY ` + g.order + ` LIMIT ?) AND ` + g.where
	args := append(append(append([]any{}, g.args...), s.gcBatchRows), g.args...)
	n := 0
	for range s.gcMaxBatches {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		res, err := exec(ctx, query, args...)
		if err != nil {
			return n, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, err
		}
		n += int(k)
		if k < int64(s.gcBatchRows) {
			break
		}
	}
	return n, nil
}
