package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// openFile opens a fresh SQLite file in a temp dir, closed at cleanup.
func openFile(tb testing.TB) *Store {
	tb.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(tb.TempDir(), "mcpauth.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContractSQLiteFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFile(t) })
}

func TestContractSQLiteMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := OpenSQLite(t.Context(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func BenchmarkSQLiteFile(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return openFile(b) })
}

func TestRebind(t *testing.T) {
	for _, tt := range []struct {
		d        dialect
		in, want string
	}{
		{sqliteDialect, "a = ? AND b = ?", "a = ? AND b = ?"},
		{postgresDialect, "a = ? AND b = ?", "a = $1 AND b = $2"},
		{postgresDialect, "SELECT 1", "SELECT 1"},
		{postgresDialect, "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
	} {
		if got := tt.d.rebind(tt.in); got != tt.want {
			t.Errorf("%s rebind(%q) = %q, want %q", tt.d.name, tt.in, got, tt.want)
		}
	}
}
