package sqlstore

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

func openPostgresTest(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContractPostgres(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPostgresTest(t, pgtest.FreshDB(t)) })
}

// Two instances starting at once on an empty database both migrate safely
// (the advisory lock serialises them) and see each other's writes.
func TestPostgresConcurrentMigration(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	stores := make([]*Store, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d failed to start: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	ctx := context.Background()
	if err := stores[0].CreateClient(ctx, store.Client{ID: "shared", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if c, err := stores[3].GetClient(ctx, "shared"); err != nil || c.Name != "x" {
		t.Fatalf("second instance does not see the first's client: %v %v", c, err)
	}
	// Reopening an already migrated database is a no-op.
	openPostgresTest(t, dsn)
}

func BenchmarkPostgres(b *testing.B) {
	dsn := pgtest.FreshDB(b)
	storetest.Bench(b, func(b *testing.B) store.Store { return openPostgresTest(b, dsn) })
}

// Connections used at once stay open afterwards (database/sql's default
// keeps 2, so each burst of requests would start new PostgreSQL backends).
func TestPostgresKeepsIdleConnections(t *testing.T) {
	s := openPostgresTest(t, pgtest.FreshDB(t))
	const n = 16
	var all, ready sync.WaitGroup
	all.Add(n)
	ready.Add(n)
	release := make(chan struct{})
	for range n {
		go func() {
			defer all.Done()
			tx, err := s.db.BeginTx(t.Context(), nil)
			ready.Done()
			if err != nil {
				t.Error(err)
				return
			}
			<-release
			if err := tx.Commit(); err != nil {
				t.Error(err)
			}
		}()
	}
	ready.Wait()
	close(release)
	all.Wait()
	if st := s.db.Stats(); st.Idle < n {
		t.Errorf("%d idle connections after %d at once, want all kept (stats %+v)", st.Idle, n, st)
	}
}

func TestInvalidationsPostgres(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	storetest.Invalidations(t, openPostgresTest(t, dsn), openPostgresTest(t, dsn))
}

// SQLite serves one process: nothing to listen to.
func TestSQLiteIsNotShared(t *testing.T) {
	s, err := OpenSQLite(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Invalidations() != nil {
		t.Fatal("a SQLite store offers invalidations")
	}
}
