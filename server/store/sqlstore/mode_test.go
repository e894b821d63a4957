//go:build unix

package sqlstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
)

// permissive sets the usual umask 022 for the test, under which a file
// created without an explicit mode would be readable by every user.
func permissive(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

func checkModes(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %#o, want 0600 (it holds the keys)", filepath.Base(p), got)
		}
	}
}

// The database, its WAL and its shared-memory file are the owner's only.
func TestSQLiteFilesOwnerOnly(t *testing.T) {
	permissive(t)
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	s := openPath(t, path)
	defer s.Close()
	if _, err := s.GetOrCreateSecret(t.Context(), "k", func() ([]byte, error) { return []byte("secret"), nil }); err != nil {
		t.Fatal(err)
	}
	checkModes(t, path) // while open: -wal and -shm exist
}

// A database an older version left world-readable is tightened on open.
func TestSQLiteExistingFileTightened(t *testing.T) {
	permissive(t)
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	s := openPath(t, path)
	if err := s.UpsertUser(t.Context(), store.User{ID: "u", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	defer s.Close()
	if u, err := s.GetUser(t.Context(), "u"); err != nil || u.Subject != "s" {
		t.Fatalf("data lost on reopen: %+v, %v", u, err)
	}
	checkModes(t, path) // -wal and -shm were created after the tightening

}
