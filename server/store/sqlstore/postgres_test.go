package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// postgresURL is the server the PostgreSQL tests use: a real PostgreSQL, as
// ../shared/recipes/with-postgres.sh provides in CI. Without one the tests
// skip, except under CI=true where a missing PostgreSQL is a failure.
func postgresURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("MCPAUTH_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("CI=true but MCPAUTH_TEST_POSTGRES_URL is unset: PostgreSQL tests must run in CI (use with-postgres.sh)")
		}
		tb.Skip("MCPAUTH_TEST_POSTGRES_URL unset: skipping PostgreSQL tests (run under ../shared/recipes/with-postgres.sh)")
	}
	return u
}

// freshPostgresDB creates an empty database for one test and drops it after,
// so every test starts from nothing and tests can run in parallel.
func freshPostgresDB(tb testing.TB) string {
	tb.Helper()
	base := postgresURL(tb)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "mcpauth_t_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating test database: %v", err)
	}
	tb.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

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
	postgresURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPostgresTest(t, freshPostgresDB(t)) })
}

// Two instances starting at once on an empty database both migrate safely
// (the advisory lock serialises them) and see each other's writes.
func TestPostgresConcurrentMigration(t *testing.T) {
	dsn := freshPostgresDB(t)
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
	dsn := freshPostgresDB(b)
	storetest.Bench(b, func(b *testing.B) store.Store { return openPostgresTest(b, dsn) })
}
