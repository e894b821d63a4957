package keyring

import (
	"errors"
	"sync/atomic"
	"testing"
)

// countingBackend counts calls to next.
type countingBackend struct {
	next  Backend
	calls atomic.Int32
}

func (c *countingBackend) Get(s, u string) (string, error) { c.calls.Add(1); return c.next.Get(s, u) }
func (c *countingBackend) Set(s, u, v string) error        { c.calls.Add(1); return c.next.Set(s, u, v) }
func (c *countingBackend) Delete(s, u string) error        { c.calls.Add(1); return c.next.Delete(s, u) }

// A KeyringOptional store without a keyring serves the read-only commands:
// it lists and deletes, never writes, and does not ask the absent keyring
// again for each entry.
func TestKeyringOptionalWithoutKeyring(t *testing.T) {
	dir := t.TempDir()
	// An entry saved while the keyring worked.
	good, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: newMemBackend()})
	if err != nil {
		t.Fatal(err)
	}
	const srv = "https://k.example/mcp"
	if err := saveBundle(good, srv, "", oauthBundle(srv, "k", 0)); err != nil {
		t.Fatal(err)
	}

	cb := &countingBackend{next: failingBackend{err: ErrNoSessionBus}}
	if _, err := Open(Config{Dir: dir, Backend: cb}); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("Open auto without KeyringOptional: %v, want ErrKeyringUnavailable", err)
	}
	if _, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: cb, KeyringOptional: true}); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("Open keyring mode: %v, want ErrKeyringUnavailable: --storage=keyring requires it", err)
	}
	s, err := Open(Config{Dir: dir, Backend: cb, KeyringOptional: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if s.Storage() != StorageNone || !errors.Is(s.FallbackReason(), ErrNoSessionBus) {
		t.Fatalf("Storage %s, reason %v", s.Storage(), s.FallbackReason())
	}
	cb.calls.Store(0)

	if list, err := s.List(); err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if _, err := loadBundle(s, srv, ""); !errors.Is(err, ErrKeyringUnavailable) || !errors.Is(err, ErrNoSessionBus) {
		t.Fatalf("Load: %v, want the keyring error", err)
	}
	if err := saveBundle(s, "https://new.example/mcp", "", oauthBundle("https://new.example/mcp", "n", 0)); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("Save: %v, want ErrKeyringUnavailable", err)
	}
	if _, err := loadBundle(s, "https://new.example/mcp", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused Save left an entry: %v", err)
	}
	if err := s.Delete(srv, ""); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n := cb.calls.Load(); n != 0 {
		t.Fatalf("%d keyring calls after Open; the first failure should stand for the run", n)
	}
}
