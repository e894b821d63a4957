package sqlstore

import (
	"context"
	"path/filepath"
	"sync"
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

func TestContractSQLiteFile(t *testing.T) { contractMerging(t, openFile) }

// In memory the store has one connection, which a group's transaction
// holds: the merged statements must be prepared before it begins.
func TestContractSQLiteMemory(t *testing.T) {
	contractMerging(t, func(t testing.TB) *Store {
		s, err := OpenSQLite(t.Context(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// contractMerging runs the contract on SQLite stores from open. Its races
// of many codes at once form groups whose consumptions run merged, so
// single use is proven under the merged statement too: it fails if none
// ever merged.
func contractMerging(t *testing.T, open func(testing.TB) *Store) {
	var mu sync.Mutex
	var stores []*Store
	storetest.Run(t, func(t *testing.T) store.Store {
		s := open(t)
		mu.Lock()
		stores = append(stores, s)
		mu.Unlock()
		return s
	})
	var merged int64
	for _, s := range stores {
		merged += s.group.merged.Load()
	}
	if merged == 0 {
		t.Error("no code consumption ran in a merged statement")
	}
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
