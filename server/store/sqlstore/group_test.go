package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
	// The other transaction checks for deadlock long after the group does,
	// so the group is the victim however a loaded machine schedules the
	// two (PostgreSQL runs the check deadlock_timeout after a wait begins).
	if _, err := other.ExecContext(ctx, `SET LOCAL deadlock_timeout = '20s'`); err != nil {
		t.Fatalf("the test database lets no session set deadlock_timeout: %v", err)
	}
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

// consumeGroupOp is ConsumeAuthCode's grouped write, for running groups by
// hand.
func consumeGroupOp(t *testing.T, s *Store, hash string, r store.Redemption) (*groupOp, *consumeWrite) {
	t.Helper()
	w, err := s.newConsumeWrite(t.Context(), hash, r)
	if err != nil {
		t.Fatal(err)
	}
	return &groupOp{ctx: t.Context(), key: "code:" + hash, fn: w.runAlone, single: true, merge: w,
		done: make(chan struct{}), lead: make(chan struct{})}, w
}

// On SQLite a group's code consumptions run as one statement with the
// single UPDATE's conditions: the matching ones are spent with their own
// token ids, the others (wrong client, expired, unknown) are not, and a
// second consumption of a code already in the statement runs alone after
// it and finds the code spent.
func TestMergedConsumes(t *testing.T) {
	s := openFile(t)
	ctx := t.Context()
	for _, h := range []string{"a", "b", "c", "d"} {
		if err := s.CreateAuthCode(ctx, groupCode(h)); err != nil {
			t.Fatal(err)
		}
	}
	redeem := func(jti string) store.Redemption {
		return store.Redemption{ClientID: "c", Now: groupNow, TokenID: jti, TokenExp: groupNow.Add(time.Hour)}
	}
	wrongClient, late := redeem("jti-c"), redeem("jti-d")
	wrongClient.ClientID = "other"
	late.Now = groupNow.Add(2 * time.Hour)
	var batch []*groupOp
	ws := map[string]*consumeWrite{}
	for _, x := range []struct {
		name, hash string
		r          store.Redemption
	}{{"a", "a", redeem("jti-a")}, {"b", "b", redeem("jti-b")}, {"a again", "a", redeem("jti-a2")},
		{"c", "c", wrongClient}, {"d", "d", late}, {"unknown", "e", redeem("jti-e")}} {
		o, w := consumeGroupOp(t, s, x.hash, x.r)
		batch, ws[x.name] = append(batch, o), w
	}
	s.group.run(batch)
	for _, o := range batch {
		if o.err != nil {
			t.Errorf("%s: group error %v", o.key, o.err)
		}
	}
	if got := s.group.merged.Load(); got != 5 {
		t.Errorf("%d writes merged, want 5 (one per code)", got)
	}
	for _, name := range []string{"a", "b"} {
		w := ws[name]
		if w.err != nil || w.code.TokenID != "jti-"+name || w.code.UserID != "u" || !w.code.CreatedAt.Equal(groupNow) {
			t.Errorf("%s: err %v, record %+v", name, w.err, w.code)
		}
		if c, err := s.GetAuthCode(ctx, name); err != nil || !c.Used || c.TokenID != "jti-"+name {
			t.Errorf("%s stored as %+v (%v)", name, c, err)
		}
	}
	for _, name := range []string{"a again", "c", "d", "unknown"} {
		if w := ws[name]; !errors.Is(w.err, sql.ErrNoRows) {
			t.Errorf("%s: err %v, want nothing written", name, w.err)
		}
	}
	if isUsed(t, s, "c") || isUsed(t, s, "d") {
		t.Error("a redemption that does not match spent its code")
	}
}

// failingMerger's statement writes, then fails: the group rolls it back to
// its savepoint and runs each write alone.
type failingMerger struct {
	s      *Store
	hashes []string
}

func (*failingMerger) mergeKind() string { return "failing" }

func (f *failingMerger) prepareMerged(ctx context.Context, _ int) (*sql.Stmt, error) {
	return f.s.prepared(ctx, `UPDATE auth_codes SET used = 1`)
}

func (f *failingMerger) runMerged(ctx context.Context, q querier, st *sql.Stmt, all []merger) error {
	if _, err := q.StmtContext(ctx, st).ExecContext(ctx); err != nil {
		return err
	}
	return errors.New("merged statement failed")
}

func TestFailedMergeRunsWritesAlone(t *testing.T) {
	s := openFile(t)
	ctx := t.Context()
	for _, h := range []string{"x", "y", "z"} {
		if err := s.CreateAuthCode(ctx, groupCode(h)); err != nil {
			t.Fatal(err)
		}
	}
	m := &failingMerger{s: s}
	x, y := consumeOp(s, "x"), consumeOp(s, "y")
	x.merge, y.merge = m, m
	s.group.run([]*groupOp{x, y})
	if x.err != nil || y.err != nil {
		t.Fatalf("writes after the failed merge: %v, %v", x.err, y.err)
	}
	if !isUsed(t, s, "x") || !isUsed(t, s, "y") {
		t.Error("a write did not run alone after the failed merge")
	}
	if isUsed(t, s, "z") {
		t.Error("the failed merged statement's write was committed")
	}
	if got := s.group.merged.Load(); got != 0 {
		t.Errorf("%d writes counted as merged", got)
	}
}

// The merged UPDATE finds each code through the primary key's index, as
// the single one does: a scan of auth_codes per group would grow with the
// table.
func TestMergedConsumeSearchesByHash(t *testing.T) {
	s := openFile(t)
	args := make([]any, 0, 21)
	for i := range 3 {
		args = append(args, fmt.Sprint("h", i), "c", "", "", int64(0), "jti", int64(0))
	}
	rows, err := s.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+mergedConsumeSQL(3), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(plan, "\n")
	if !strings.Contains(joined, "SEARCH auth_codes USING INDEX") || strings.Contains(joined, "SCAN auth_codes") {
		t.Errorf("query plan:\n%s", joined)
	}
}
