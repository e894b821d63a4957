package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Group commit (SQLite): the single-use writes — code exchange, device
// approval, refresh rotation — queue, and whoever finds no commit under way
// leads: it runs every queued write in one transaction, each inside its own
// savepoint (a write that fails is rolled back alone), commits once, and
// only then answers each caller; then it hands the lead to the first write
// that queued meanwhile. Single use is decided by the same conditional
// statements as before, in one writer's order; a caller is answered only
// after the commit holding its write, so a crash loses only unanswered
// writes.
//
// PostgreSQL keeps one transaction per write: instances lock rows in
// different orders there, and a deadlock aborting a shared transaction
// would fail every write in it.
type committer struct {
	s       *Store
	mu      sync.Mutex
	queue   []*groupOp
	leading bool
}

// maxGroup bounds one transaction.
const maxGroup = 64

type groupOp struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	err  error
	done chan struct{} // closed once answered
	lead chan struct{} // closed when this caller is to lead the next group
}

// grouped runs fn in a transaction shared with concurrent callers on
// SQLite, in one of its own on PostgreSQL, and returns once that transaction
// has committed (fn's error, or the commit's).
func (s *Store) grouped(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if s.group == nil {
		return s.inTx(ctx, func(tx *sql.Tx) error { return fn(ctx, tx) })
	}
	return s.group.do(ctx, fn)
}

func (c *committer) do(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	// The statements run on the group's connection: one caller giving up
	// must not interrupt the others' writes, so its own cancellation only
	// counts until its write starts.
	if err := ctx.Err(); err != nil {
		return err
	}
	o := &groupOp{ctx: context.WithoutCancel(ctx), fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, o)
	if c.leading {
		c.mu.Unlock()
		select {
		case <-o.done:
			return o.err
		case <-o.lead:
		}
	} else {
		c.leading = true
		c.mu.Unlock()
	}
	// Leading: commit one group (which holds o), then pass the lead on.
	c.mu.Lock()
	n := min(len(c.queue), maxGroup)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()
	c.run(batch)
	c.mu.Lock()
	if len(c.queue) > 0 {
		close(c.queue[0].lead)
	} else {
		c.leading = false
	}
	c.mu.Unlock()
	<-o.done
	return o.err
}

// run commits batch in one transaction and answers every write in it.
func (c *committer) run(batch []*groupOp) {
	defer func() {
		for _, o := range batch {
			close(o.done)
		}
	}()
	failAll := func(err error) {
		for _, o := range batch {
			o.err = err
		}
	}
	defer c.s.lockWrite()()
	ctx := context.Background()
	tx, err := c.s.db.BeginTx(ctx, nil)
	if err != nil {
		failAll(fmt.Errorf("begin: %w", err))
		return
	}
	defer tx.Rollback() // no-op after Commit
	for _, o := range batch {
		if _, err := tx.ExecContext(ctx, `SAVEPOINT w`); err != nil {
			failAll(fmt.Errorf("savepoint: %w", err))
			return
		}
		if o.err = o.fn(o.ctx, tx); o.err != nil {
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO w`); err != nil {
				failAll(fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, `RELEASE w`); err != nil {
			failAll(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		failAll(fmt.Errorf("commit: %w", err))
	}
}
