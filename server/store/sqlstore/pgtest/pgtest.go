// Package pgtest gives tests a real, empty PostgreSQL database. The server
// comes from MCPAUTH_TEST_POSTGRES_URL (scripts/with-postgres.sh sets it).
// Without it tests skip, except under CI=true, where a missing PostgreSQL is
// a failure; packages using it run internal/testenv's Main to report skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// URL returns the PostgreSQL server's URL, or skips/fails tb.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("MCPAUTH_TEST_POSTGRES_URL")
	if u == "" {
		testenv.Missing(tb, testenv.PostgreSQL, "MCPAUTH_TEST_POSTGRES_URL is unset")
	}
	return u
}

// FreshDB creates an empty database for one test, dropped at cleanup, and
// returns its URL, so tests start from nothing and can run in parallel.
func FreshDB(tb testing.TB) string {
	tb.Helper()
	base := URL(tb)
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
