package keyring

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	shortTimeout = 200 * time.Millisecond
	// margin covers scheduling under -race on a loaded machine; the hang
	// itself would last until the test ends.
	margin = time.Second
)

// timed runs fn and fails if it took longer than shortTimeout+margin.
func timed(t *testing.T, what string, fn func() error) error {
	t.Helper()
	start := time.Now()
	err := fn()
	if d := time.Since(start); d > shortTimeout+margin {
		t.Fatalf("%s took %s, want at most %s", what, d, shortTimeout+margin)
	}
	return err
}

func assertTimeout(t *testing.T, err error, op string) {
	t.Helper()
	if !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("got %v, want ErrKeyringUnavailable", err)
	}
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a *TimeoutError inside", err)
	}
	if te.Op != op || te.Timeout != shortTimeout {
		t.Fatalf("TimeoutError = %+v, want op %q timeout %s", te, op, shortTimeout)
	}
}

func TestOpenTimesOutOnHangingKeyring(t *testing.T) {
	for _, mode := range []Storage{StorageAuto, StorageKeyring} {
		t.Run(string(mode), func(t *testing.T) {
			err := timed(t, "Open", func() error {
				_, err := Open(Config{Dir: t.TempDir(), Storage: mode, Backend: newHangingBackend(t), Timeout: shortTimeout})
				return err
			})
			assertTimeout(t, err, "get")
		})
	}
}

// toggleBackend works like memBackend until hang is set, then blocks like a
// keyring that got locked after Open. A fake for the same reason as
// hangingBackend.
type toggleBackend struct {
	*memBackend
	hang    atomic.Bool
	release chan struct{}
}

func (b *toggleBackend) wait() {
	if b.hang.Load() {
		<-b.release
	}
}
func (b *toggleBackend) Get(s, u string) (string, error) { b.wait(); return b.memBackend.Get(s, u) }
func (b *toggleBackend) Set(s, u, v string) error        { b.wait(); return b.memBackend.Set(s, u, v) }
func (b *toggleBackend) Delete(s, u string) error        { b.wait(); return b.memBackend.Delete(s, u) }

func TestStoreCallsTimeOut(t *testing.T) {
	tb := &toggleBackend{memBackend: newMemBackend(), release: make(chan struct{})}
	t.Cleanup(func() { close(tb.release) })
	s, err := Open(Config{Dir: t.TempDir(), Storage: StorageKeyring, Backend: tb, Timeout: shortTimeout})
	if err != nil {
		t.Fatal(err)
	}
	const srv = "https://h.example"
	if err := saveBundle(s, srv, "", oauthBundle(srv, "h", 0)); err != nil {
		t.Fatal(err)
	}
	tb.hang.Store(true)

	assertTimeout(t, timed(t, "Load", func() error { _, err := loadBundle(s, srv, ""); return err }), "get")
	assertTimeout(t, timed(t, "Save", func() error { return saveBundle(s, srv, "", oauthBundle(srv, "h2", 0)) }), "get")
	assertTimeout(t, timed(t, "CheckKeyring", s.CheckKeyring), "get")
	// Delete removes the ciphertext and does not wait forever on the key.
	if err := timed(t, "Delete", func() error { return s.Delete(srv, "") }); err != nil {
		t.Fatalf("Delete with hanging keyring: %v", err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Fatalf("List after Delete = %+v, want empty", list)
	}
}

func TestAutoUnavailable(t *testing.T) {
	cause := errors.New("The name org.freedesktop.secrets was not provided by any .service files")
	dir := t.TempDir()

	_, err := Open(Config{Dir: dir, Storage: StorageAuto, Backend: failingBackend{cause}})
	var ue *UnavailableError
	if !errors.Is(err, ErrKeyringUnavailable) || !errors.As(err, &ue) || !errors.Is(ue.Cause, cause) {
		t.Fatalf("Open auto: got %v, want *UnavailableError carrying the cause", err)
	}
	if !strings.Contains(err.Error(), "org.freedesktop.secrets") {
		t.Errorf("error %q does not name the cause", err)
	}
	// Nothing was written: no silent plaintext.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("failed Open wrote %d files", len(entries))
	}

	// Explicit keyring storage refuses even when fallback is allowed.
	if _, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: failingBackend{cause}, AllowFileFallback: true}); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("Open keyring with fallback allowed: got %v, want ErrKeyringUnavailable", err)
	}

	// With the caller's consent, auto continues with file storage and says why.
	s, err := Open(Config{Dir: dir, Storage: StorageAuto, Backend: failingBackend{cause}, AllowFileFallback: true})
	if err != nil {
		t.Fatalf("Open auto with fallback: %v", err)
	}
	if s.Storage() != StorageFile || !errors.Is(s.FallbackReason(), ErrKeyringUnavailable) {
		t.Fatalf("Storage() = %s, FallbackReason() = %v; want file and the keyring error", s.Storage(), s.FallbackReason())
	}
	b := oauthBundle("https://u.example", "u", 0)
	if err := saveBundle(s, "https://u.example", "", b); err != nil {
		t.Fatal(err)
	}
	assertBundle(t, s, "https://u.example", "", b)
	list, _ := s.List()
	if len(list) != 1 || list[0].Backend != StorageFile {
		t.Fatalf("List = %+v, want one file-backed entry", list)
	}
}

func TestAvailableAutoUsesKeyring(t *testing.T) {
	s, err := Open(Config{Dir: t.TempDir(), Backend: newMemBackend(), AllowFileFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Storage() != StorageKeyring || s.FallbackReason() != nil {
		t.Fatalf("Storage() = %s, FallbackReason() = %v; want keyring, nil", s.Storage(), s.FallbackReason())
	}
}
