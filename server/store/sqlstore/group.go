package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit: the single-use writes — code exchange, device approval,
// refresh rotation — queue, and whoever finds no commit under way leads: it
// runs every queued write in one transaction, each inside its own savepoint
// (a write that fails is rolled back alone), commits once, and only then
// answers each caller; then it hands the lead to the first write that
// queued meanwhile (on PostgreSQL, up to pgLanes groups commit at once).
// Single use is decided by the same conditional
// statements as before; a caller is answered only after the commit holding
// its write, so a crash of the process loses only unanswered writes (an OS
// crash too with Options.SQLiteFullSync; see there). On SQLite, writes of
// one kind (code consumptions) run as one statement in their group (see
// merger).
//
// On PostgreSQL several instances lock rows concurrently, so a group runs
// its writes in key order (the same order in every instance), and a write
// that deadlocks or fails to serialise (SQLSTATE 40P01, 40001) is rolled
// back to its savepoint, which releases its locks and leaves the others'
// writes intact, and runs again alone after the group has committed.
type committer struct {
	s     *Store
	lanes int // groups committing at once: 1 on SQLite (one writer)
	mu    sync.Mutex
	queue []*groupOp
	leads int // groups committing now
	// merged counts the writes run in merged statements, for tests.
	merged atomic.Int64
}

// pgLanes: on PostgreSQL a group's statements are round trips made one
// after another on one connection, and PostgreSQL already shares one WAL
// flush among concurrent commits, so a single group at a time serialises
// writes for little gain (BenchmarkGroupCommit: 8 callers in one lane took
// ~10x as long per write as 8 transactions). Groups form only once this
// many are committing.
const pgLanes = 16

// maxGroup bounds one transaction.
const maxGroup = 64

// maxSoloRetries bounds the retries of a write that keeps deadlocking.
const maxSoloRetries = 10

type groupOp struct {
	ctx context.Context
	key string // the row the write locks first: the group's lock order
	fn  func(ctx context.Context, q querier) error
	// single: fn runs one statement, atomic on its own, so a group of just
	// this write runs it without a transaction (autocommit): one round trip
	// where BEGIN, SAVEPOINT, the statement and COMMIT took four.
	single bool
	// merge, when set, lets a group on SQLite run this write together with
	// the others of its kind as one statement (see merger).
	merge merger
	err   error
	done  chan struct{} // closed once answered
	lead  chan struct{} // closed when this caller is to lead the next group
	// batch is the group this caller leads, set before lead is closed.
	batch []*groupOp
}

// querier is what a grouped write runs its statements on: the group's
// *sql.Tx, or the database itself (autocommit) for a single statement.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	// StmtContext is the prepared statement st, for this transaction.
	StmtContext(ctx context.Context, st *sql.Stmt) *sql.Stmt
}

// merger is a write that can share one statement with the others of its
// kind in a group: on SQLite a statement's fixed cost (binding, stepping,
// resetting, through database/sql) is a large part of a single-use write,
// and a group of exchanges spends its codes in one UPDATE. prepareMerged
// prepares the statement for n writes; the group calls it before its
// transaction begins, which may hold a store's only connection (SQLite in
// memory). runMerged runs all (of the receiver's kind, the receiver among
// them) with st on q and records each one's outcome; an error means none
// was written, and the group then runs them one by one as usual.
type merger interface {
	mergeKind() string
	prepareMerged(ctx context.Context, n int) (*sql.Stmt, error)
	runMerged(ctx context.Context, q querier, st *sql.Stmt, all []merger) error
}

// autocommit runs each statement in a transaction of its own.
type autocommit struct{ *sql.DB }

func (autocommit) StmtContext(_ context.Context, st *sql.Stmt) *sql.Stmt { return st }

// grouped runs fn in a transaction shared with concurrent callers and
// returns once that transaction has committed (fn's error, or the
// commit's). key names the row fn locks first. fn may run more than once
// (after a deadlock), each time in a transaction rolled back to before it.
func (s *Store) grouped(ctx context.Context, key string, fn func(ctx context.Context, q querier) error) error {
	return s.groupedOp(ctx, key, false, nil, fn)
}

// groupedStmt is grouped for an fn that runs exactly one statement: when
// no other write shares its group it runs as an autocommit statement.
func (s *Store) groupedStmt(ctx context.Context, key string, fn func(ctx context.Context, q querier) error) error {
	return s.groupedOp(ctx, key, true, nil, fn)
}

// groupedMerge is groupedStmt for a write that m can also run merged with
// others of its kind; fn runs it alone.
func (s *Store) groupedMerge(ctx context.Context, key string, m merger, fn func(ctx context.Context, q querier) error) error {
	return s.groupedOp(ctx, key, true, m, fn)
}

func (s *Store) groupedOp(ctx context.Context, key string, single bool, m merger, fn func(context.Context, querier) error) error {
	if s.group == nil {
		if single {
			return s.soloStmt(ctx, fn)
		}
		return s.solo(ctx, fn)
	}
	return s.group.do(ctx, key, single, m, fn)
}

func (c *committer) do(ctx context.Context, key string, single bool, m merger, fn func(context.Context, querier) error) error {
	// The statements run on the group's connection: one caller giving up
	// must not interrupt the others' writes, so its own cancellation only
	// counts until its write starts.
	if err := ctx.Err(); err != nil {
		return err
	}
	o := &groupOp{ctx: context.WithoutCancel(ctx), key: key, fn: fn, single: single, merge: m, done: make(chan struct{}), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, o)
	if c.leads >= max(c.lanes, 1) {
		c.mu.Unlock()
		select {
		case <-o.done:
			return o.err
		case <-o.lead: // o.batch, holding o, was set before
		}
	} else {
		c.leads++
		// One writer (SQLite): yield once before taking the group, so that
		// writes whose requests are already being handled join it rather
		// than wait for the next commit. With nothing else runnable this
		// returns at once. Out of process it took code exchanges from 0.28
		// to 0.32 of the bare handler, and, with merged consumes, to 0.34.
		if c.lanes == 1 {
			c.mu.Unlock()
			runtime.Gosched()
			c.mu.Lock()
		}
		o.batch = c.take()
		c.mu.Unlock()
	}
	// Leading: commit one group (which holds o), then pass the lead, with
	// the next group, to the first write still queued.
	c.run(o.batch)
	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.batch = c.take()
		close(next.lead)
	} else {
		c.leads--
	}
	c.mu.Unlock()
	<-o.done
	return o.err
}

// take removes the next group from the queue; c.mu is held.
func (c *committer) take() []*groupOp {
	n := min(len(c.queue), maxGroup)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	return batch
}

// run commits batch in one transaction and answers every write in it.
func (c *committer) run(batch []*groupOp) {
	defer func() {
		for _, o := range batch {
			close(o.done)
		}
	}()
	if len(batch) == 1 && batch[0].single {
		batch[0].err = c.s.soloStmt(batch[0].ctx, batch[0].fn)
		return
	}
	if c.s.d.retryable != nil {
		// Stable: writes to one row keep their queue order.
		slices.SortStableFunc(batch, func(a, b *groupOp) int { return strings.Compare(a.key, b.key) })
	}
	retry, err := c.runTx(batch)
	if err != nil && c.s.d.isRetryable(err) {
		retry, err = batch, nil // nothing committed: every write again, alone
	}
	if err != nil {
		for _, o := range batch {
			o.err = err
		}
		return
	}
	for _, o := range retry {
		o.err = c.s.solo(o.ctx, o.fn)
	}
}

// runTx runs batch in one transaction, each write (and on SQLite each
// merged statement) in a savepoint, and returns the writes rolled back for
// a retryable error, to run again once the transaction is over. An error
// means nothing was committed.
func (c *committer) runTx(batch []*groupOp) (retry []*groupOp, err error) {
	defer c.s.lockWrite()()
	ctx := context.Background()
	var merges []mergedWrites
	rest := batch
	if c.s.d.retryable == nil && len(batch) > 1 { // SQLite: one writer, so no deadlocks to order around
		merges, rest = planMerges(ctx, batch)
	}
	tx, err := c.s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	if len(batch) == 1 {
		// Alone, a write needs no savepoint: if it fails, the transaction
		// is rolled back whole (the deferred Rollback), committing nothing.
		o := batch[0]
		if o.err = o.fn(o.ctx, tx); o.err != nil {
			if c.s.d.isRetryable(o.err) {
				retry = batch
			}
			return retry, nil
		}
		if err := tx.Commit(); err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
		return nil, nil
	}
	for _, m := range merges {
		ran, err := c.inSavepoint(ctx, tx, m)
		if err != nil {
			return nil, err
		}
		if !ran {
			rest = append(rest, m.ops...)
		}
	}
	for _, o := range rest {
		if _, err := tx.ExecContext(ctx, `SAVEPOINT w`); err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
		if o.err = o.fn(o.ctx, tx); o.err != nil {
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO w`); err != nil {
				return nil, fmt.Errorf("rollback to savepoint: %w", err)
			}
			if c.s.d.isRetryable(o.err) {
				retry = append(retry, o)
			}
		}
		// PostgreSQL: no RELEASE, a round trip that only pops the savepoint
		// (the next SAVEPOINT w shadows it; ROLLBACK TO w finds the latest).
		if c.s.d.retryable == nil {
			if _, err := tx.ExecContext(ctx, `RELEASE w`); err != nil {
				return nil, fmt.Errorf("release savepoint: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return retry, nil
}

// mergedWrites are writes of one kind to run as one statement.
type mergedWrites struct {
	ops []*groupOp
	st  *sql.Stmt
}

// planMerges picks, from batch, the writes that merge with at least one
// other of their kind, prepares each kind's statement, and returns the
// writes left to run one by one: the others, a second write to a row
// already in a statement (so no statement decides between two writes to
// one row), and those whose statement could not be prepared.
func planMerges(ctx context.Context, batch []*groupOp) (merges []mergedWrites, rest []*groupOp) {
	kinds := map[string][]*groupOp{}
	var order []string
	keys := map[string]bool{}
	for _, o := range batch {
		if o.merge != nil && !keys[o.key] {
			keys[o.key] = true
			k := o.merge.mergeKind()
			if kinds[k] == nil {
				order = append(order, k)
			}
			kinds[k] = append(kinds[k], o)
		}
	}
	merging := map[*groupOp]bool{}
	for _, k := range order {
		ops := kinds[k]
		if len(ops) < 2 {
			continue
		}
		st, err := ops[0].merge.prepareMerged(ctx, len(ops))
		if err != nil {
			continue // they run alone, as without merging
		}
		merges = append(merges, mergedWrites{ops: ops, st: st})
		for _, o := range ops {
			merging[o] = true
		}
	}
	for _, o := range batch {
		if !merging[o] {
			rest = append(rest, o)
		}
	}
	return merges, rest
}

// inSavepoint runs m's statement in tx inside a savepoint and reports
// whether it did; when it failed it was rolled back to the savepoint, and
// its writes are to run alone, after, and meet their own errors. An error
// is the transaction's.
func (c *committer) inSavepoint(ctx context.Context, tx *sql.Tx, m mergedWrites) (ran bool, err error) {
	all := make([]merger, len(m.ops))
	for i, o := range m.ops {
		all[i] = o.merge
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT m`); err != nil {
		return false, fmt.Errorf("savepoint: %w", err)
	}
	if m.ops[0].merge.runMerged(ctx, tx, m.st, all) == nil {
		ran = true
		c.merged.Add(int64(len(m.ops)))
	} else if _, err := tx.ExecContext(ctx, `ROLLBACK TO m`); err != nil {
		return false, fmt.Errorf("rollback to savepoint: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `RELEASE m`); err != nil {
		return false, fmt.Errorf("release savepoint: %w", err)
	}
	return ran, nil
}

// solo runs fn in a transaction of its own, again while PostgreSQL reports
// a deadlock or serialisation failure (a bounded number of times).
func (s *Store) solo(ctx context.Context, fn func(context.Context, querier) error) error {
	var err error
	for range maxSoloRetries {
		err = s.inTx(ctx, func(tx *sql.Tx) error { return fn(ctx, tx) })
		if !s.d.isRetryable(err) {
			return err
		}
	}
	return err
}

// soloStmt runs fn, a single statement, as an autocommit statement (under
// the SQLite write lock), again while PostgreSQL reports a deadlock or
// serialisation failure (a bounded number of times).
func (s *Store) soloStmt(ctx context.Context, fn func(context.Context, querier) error) error {
	var err error
	for range maxSoloRetries {
		unlock := s.lockWrite()
		err = fn(ctx, autocommit{s.db})
		unlock()
		if !s.d.isRetryable(err) {
			return err
		}
	}
	return err
}

// pgRetryable: deadlock_detected or serialization_failure, after which the
// transaction (or savepoint) was rolled back and can simply run again.
func pgRetryable(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "40P01" || e.Code == "40001")
}
