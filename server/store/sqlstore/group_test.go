package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// eachDialect runs f on a fresh SQLite file and, when available, a fresh
// PostgreSQL database.
func eachDialect(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openFile(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, openPostgresTest(t, pgtest.FreshDB(t))) })
}

var groupNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func groupCode(hash string) store.AuthCode {
	return store.AuthCode{Hash: hash, ClientID: "c", UserID: "u", CreatedAt: groupNow, ExpiresAt: groupNow.Add(time.Hour)}
}

// consumeOp flips one code's used flag, as ConsumeAuthCode does.
func consumeOp(s *Store, hash string) *groupOp {
	return &groupOp{ctx: context.Background(), key: hash, done: make(chan struct{}), lead: make(chan struct{}),
		fn: func(ctx context.Context, tx querier) error {
			n, err := s.txExec(ctx, tx, `UPDATE auth_codes SET used = 1 WHERE hash = ? AND used = 0`, hash)
			if err == nil && n != 1 {
				err = fmt.Errorf("%s: %w", hash, store.ErrAlreadyUsed)
			}
			return err
		}}
}

func isUsed(t *testing.T, s *Store, hash string) bool {
	t.Helper()
	c, err := s.GetAuthCode(t.Context(), hash)
	if err != nil {
		t.Fatal(err)
	}
	return c.Used
}

// The contract suite with every concurrent single-use write grouped (one
// lane): its 50-way races then run inside shared transactions.
func TestContractPostgresOneLane(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		s := openPostgresTest(t, pgtest.FreshDB(t))
		s.group.lanes = 1
		return s
	})
}

// A failing write in a group (here a duplicate insert; on PostgreSQL it
// would abort the whole transaction without its savepoint) is rolled back
// alone: the writes before and after it commit.
func TestGroupFailureIsolated(t *testing.T) {
	eachDialect(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		for _, h := range []string{"a", "b"} {
			if err := s.CreateAuthCode(ctx, groupCode(h)); err != nil {
				t.Fatal(err)
			}
		}
		dup := &groupOp{ctx: ctx, key: "a2", done: make(chan struct{}), lead: make(chan struct{}),
			fn: func(ctx context.Context, tx querier) error {
				_, err := s.txExec(ctx, tx, `INSERT INTO auth_codes (hash, client_id, redirect_uri, code_challenge, scope,
					resource, user_id, created_at, expires_at, used, used_at, token_id, token_exp)
					VALUES ('a', '', '', '', '', '', '', 0, 0, 0, 0, '', 0)`)
				return err
			}}
		batch := []*groupOp{consumeOp(s, "a"), dup, consumeOp(s, "b"), consumeOp(s, "b")}
		s.group.run(batch)
		if batch[0].err != nil {
			t.Errorf("consume a: %v", batch[0].err)
		}
		if !s.d.uniqueViolation(dup.err) {
			t.Errorf("duplicate insert: err = %v, want a unique violation", dup.err)
		}
		if batch[2].err != nil || !errors.Is(batch[3].err, store.ErrAlreadyUsed) {
			t.Errorf("consuming b twice in one group: %v, %v; want nil, already used", batch[2].err, batch[3].err)
		}
		if !isUsed(t, s, "a") || !isUsed(t, s, "b") {
			t.Error("a write after the failed one was not committed")
		}
	})
}

// A deadlock with another transaction aborts only the group's write that
// was chosen as the victim; it is retried alone after the group commits.
// The other transaction waits on the group's first lock, so PostgreSQL
// (whose group started waiting first, and so checks first) picks the group.
func TestPostgresGroupDeadlockRetried(t *testing.T) {
	s := openPostgresTest(t, pgtest.FreshDB(t))
	ctx := t.Context()
	for _, h := range []string{"a", "b"} {
		if err := s.CreateAuthCode(ctx, groupCode(h)); err != nil {
			t.Fatal(err)
		}
	}
	other, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	if _, err := s.txExec(ctx, other, `UPDATE auth_codes SET scope = scope WHERE hash = ?`, "b"); err != nil {
		t.Fatal(err)
	}
	batch := []*groupOp{consumeOp(s, "b"), consumeOp(s, "a")} // run sorted: a, then b
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		s.group.run(batch)
	}()
	waitForLockWait(t, s)
	// Now lock a, which the group holds: a cycle.
	if _, err := s.txExec(ctx, other, `UPDATE auth_codes SET scope = scope WHERE hash = ?`, "a"); err != nil {
		t.Fatalf("the other transaction was the deadlock victim, not the group: %v", err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	<-ran
	for _, o := range batch {
		if o.err != nil {
			t.Errorf("consume %s: %v", o.key, o.err)
		}
	}
	if !isUsed(t, s, "a") || !isUsed(t, s, "b") {
		t.Error("a code was not consumed")
	}
}

// waitForLockWait returns once some session of s's database waits for a
// row lock (bounded: 2,000 polls).
func waitForLockWait(t *testing.T, s *Store) {
	t.Helper()
	for range 2000 {
		var n int
		if err := s.db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the group never waited for the other transaction's lock")
}

// Several instances consume the same codes at once, in opposite orders:
// each code is spent exactly once, and no caller sees a deadlock.
func TestPostgresGroupAcrossInstances(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	const instances, codes, perCode = 3, 40, 4
	var ss []*Store
	for range instances {
		s := openPostgresTest(t, dsn)
		s.group.lanes = 1 // every concurrent write grouped
		ss = append(ss, s)
	}
	ctx := t.Context()
	for i := range codes {
		if err := ss[0].CreateAuthCode(ctx, groupCode(fmt.Sprintf("c%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	wins := map[string]int{}
	var wg sync.WaitGroup
	for w := range instances * perCode {
		s := ss[w%instances]
		wg.Go(func() {
			for j := range codes {
				i := j
				if w%2 == 1 {
					i = codes - 1 - j
				}
				h := fmt.Sprintf("c%03d", i)
				_, err := s.ConsumeAuthCode(ctx, h, store.Redemption{ClientID: "c", Now: groupNow, TokenID: "jti-" + h, TokenExp: groupNow.Add(time.Hour)})
				switch {
				case err == nil:
					mu.Lock()
					wins[h]++
					mu.Unlock()
				case !errors.Is(err, store.ErrAlreadyUsed):
					t.Errorf("consume %s: %v", h, err)
				}
			}
		})
	}
	wg.Wait()
	for i := range codes {
		if h := fmt.Sprintf("c%03d", i); wins[h] != 1 {
			t.Errorf("code %s spent %d times, want once", h, wins[h])
		}
	}
}
