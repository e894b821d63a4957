//go:build unix

package keyring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// wantUntrusted checks err is ErrUntrusted naming path (and, for another
// owner, that owner) without echoing the token.
func wantUntrusted(t *testing.T, what string, err error, path, owner string) {
	t.Helper()
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), owner) {
		t.Fatalf("%s: %v; want ErrUntrusted naming %s and %q", what, err, path, owner)
	}
	if strings.Contains(err.Error(), "at-attacker") {
		t.Fatalf("%s: the error echoes the token: %v", what, err)
	}
}

// plantedStore is a file-mode store in a fresh folder holding the
// attacker's token for srv, and settings that choose file storage.
func plantedStore(t *testing.T, srv string) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tokens")
	if err := SaveSettings(dir, Settings{Storage: StorageFile}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := saveBundle(s, srv, "", oauthBundle(srv, "attacker", 0)); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// Issue 30 (8): the folder, settings.json, an entry file or the index
// owned by another user (not root) is refused, naming the path and the
// owner, as ssh refuses such files in ~/.ssh: the planted token is never
// returned.
func TestForeignOwnedFilesRefused(t *testing.T) {
	const srv = "https://victim.example/mcp"
	owner := fmt.Sprintf("uid %d", testenv.Nobody)
	t.Run("settings.json", func(t *testing.T) {
		_, dir := plantedStore(t, srv)
		testenv.GiveAway(t, SettingsPath(dir))
		_, err := LoadSettings(dir)
		wantUntrusted(t, "LoadSettings", err, SettingsPath(dir), owner)
	})
	t.Run("entry file", func(t *testing.T) {
		s, _ := plantedStore(t, srv)
		testenv.GiveAway(t, entryPath(s, srv, DefaultAccount))
		b, err := loadBundle(s, srv, "")
		wantUntrusted(t, "Load", err, entryPath(s, srv, DefaultAccount), owner)
		if b.AccessToken != "" {
			t.Fatalf("Load returned the planted token")
		}
		// logout stays a way out: Delete removes the file.
		if err := s.Delete(srv, ""); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := os.Lstat(entryPath(s, srv, DefaultAccount)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("entry file still there: %v", err)
		}
	})
	t.Run("index", func(t *testing.T) {
		s, dir := plantedStore(t, srv)
		index := filepath.Join(dir, "index.json")
		testenv.GiveAway(t, index)
		_, err := s.List()
		wantUntrusted(t, "List", err, index, owner)
		err = saveBundle(s, "https://other.example/mcp", "", oauthBundle("https://other.example/mcp", "mine", 0))
		wantUntrusted(t, "Save", err, index, owner)
	})
	t.Run("folder", func(t *testing.T) {
		_, dir := plantedStore(t, srv)
		testenv.GiveAway(t, dir)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSettings(dir)
		wantUntrusted(t, "LoadSettings", err, dir, owner)
		_, err = Open(Config{Dir: dir, Storage: StorageFile})
		wantUntrusted(t, "Open", err, dir, owner)
		// Refused before ensureDir's chmod: a foreign folder is not adopted.
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("the foreign folder was changed: %v", err)
		}
	})
	t.Run("lock file", func(t *testing.T) {
		s, dir := plantedStore(t, srv)
		testenv.GiveAway(t, filepath.Join(dir, ".lock"))
		_, err := loadBundle(s, srv, "")
		wantUntrusted(t, "Load", err, filepath.Join(dir, ".lock"), owner)
	})
}

// Symbolic links are not followed for the lock, index, settings or entry
// files, even to a file of the user's own: a dangling .lock link is
// refused and its target not created.
func TestSymlinkedFilesRefused(t *testing.T) {
	const srv = "https://victim.example/mcp"
	const link = "symbolic link"
	// relink replaces path by a link to a copy of it outside the folder.
	relink := func(t *testing.T, path string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(target, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("dangling .lock", func(t *testing.T) {
		s, dir := plantedStore(t, srv)
		target := filepath.Join(t.TempDir(), "created-by-the-lock")
		lock := filepath.Join(dir, ".lock")
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, lock); err != nil {
			t.Fatal(err)
		}
		_, err := loadBundle(s, srv, "")
		wantUntrusted(t, "Load", err, lock, link)
		err = saveBundle(s, srv, "", oauthBundle(srv, "mine", 0))
		wantUntrusted(t, "Save", err, lock, link)
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the lock link's target was created: %v", err)
		}
	})
	t.Run("entry lock", func(t *testing.T) {
		s, dir := plantedStore(t, srv)
		target := filepath.Join(t.TempDir(), "created-by-the-lock")
		lock := filepath.Join(dir, "tok-"+entryID(srv, DefaultAccount)+".lock")
		if err := os.Symlink(target, lock); err != nil {
			t.Fatal(err)
		}
		_, err := s.LockEntry(srv, "", time.Second)
		wantUntrusted(t, "LockEntry", err, lock, link)
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the lock link's target was created: %v", err)
		}
	})
	t.Run("settings.json", func(t *testing.T) {
		_, dir := plantedStore(t, srv)
		relink(t, SettingsPath(dir))
		_, err := LoadSettings(dir)
		wantUntrusted(t, "LoadSettings", err, SettingsPath(dir), link)
	})
	t.Run("entry file", func(t *testing.T) {
		s, _ := plantedStore(t, srv)
		relink(t, entryPath(s, srv, DefaultAccount))
		b, err := loadBundle(s, srv, "")
		wantUntrusted(t, "Load", err, entryPath(s, srv, DefaultAccount), link)
		if b.AccessToken != "" {
			t.Fatalf("Load returned the token behind the link")
		}
	})
	t.Run("index", func(t *testing.T) {
		s, dir := plantedStore(t, srv)
		relink(t, filepath.Join(dir, "index.json"))
		_, err := s.List()
		wantUntrusted(t, "List", err, filepath.Join(dir, "index.json"), link)
	})
}

// A FIFO planted as settings.json is refused at once: opening it must not
// wait for a writer that never comes.
func TestFIFOSettingsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(SettingsPath(dir), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadSettings(dir); done <- err }()
	select {
	case err := <-done:
		wantUntrusted(t, "LoadSettings", err, SettingsPath(dir), "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("LoadSettings hangs on a FIFO")
	}
}
