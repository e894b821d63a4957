package keyring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertBundle(t *testing.T, s *Store, server, account string, want testBundle) {
	t.Helper()
	got, err := loadBundle(s, server, account)
	if err != nil {
		t.Fatalf("Load(%q, %q): %v", server, account, err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("Load(%q, %q) = %s, want %s", server, account, g, w)
	}
}

func TestSaveLoadOverwriteDelete(t *testing.T) {
	s, mb, clk := openMem(t)
	const server = "https://mcp.example/mcp"
	first := oauthBundle(server, "one", 0)

	if _, err := loadBundle(s, server, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load before Save: got %v, want ErrNotFound", err)
	}
	if err := saveBundle(s, server, "alice", first); err != nil {
		t.Fatalf("Save: %v", err)
	}
	assertBundle(t, s, server, "alice", first)

	// The keyring holds only the 256-bit key, and the file never holds the
	// token in clear.
	items := mb.snapshot()
	if len(items) != 1 {
		t.Fatalf("keyring items = %d, want 1", len(items))
	}
	for k, v := range items {
		if k != [2]string{"mcpauth:" + server, "alice"} {
			t.Errorf("keyring item = %q, want service mcpauth:<server>, user alice", k)
		}
		if key, err := decodeKey(v); err != nil || len(key) != 32 {
			t.Errorf("keyring value is not a 256-bit key: %v", err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(s.Dir(), s.entryFile(server, "alice")))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("at-one")) || bytes.Contains(raw, []byte("rt-one")) {
		t.Fatal("entry file contains a token in clear")
	}

	clk.Advance(time.Minute)
	second := oauthBundle(server, "two", 10)
	second.RefreshToken = ""
	if err := saveBundle(s, server, "alice", second); err != nil {
		t.Fatalf("Save overwrite: %v", err)
	}
	assertBundle(t, s, server, "alice", second)
	if n := len(mb.snapshot()); n != 1 {
		t.Fatalf("keyring items after overwrite = %d, want 1 (key reused)", n)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("List after overwrite = %+v, want one entry updated at %s", list, t0.Add(time.Minute))
	}

	if err := s.Delete(server, "alice"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := loadBundle(s, server, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Delete: got %v, want ErrNotFound", err)
	}
	if n := len(mb.snapshot()); n != 0 {
		t.Fatalf("keyring items after Delete = %d, want 0", n)
	}
	if err := s.Delete(server, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: got %v, want ErrNotFound", err)
	}
}

// A keyring with Windows' 2560-byte limit: big bundles must still work
// because only the key goes to the keyring (go-keyring ErrSetDataTooBig,
// kubelogin#1255).
func TestLargeBundles(t *testing.T) {
	for _, size := range []int{5 << 10, 70 << 10, 900 << 10} {
		t.Run(fmt.Sprintf("%dB", size), func(t *testing.T) {
			s, mb, _ := openMem(t)
			mb.maxValue = 2560
			b := oauthBundle("https://big.example/mcp", "big", size)
			if err := saveBundle(s, "https://big.example/mcp", "", b); err != nil {
				t.Fatalf("Save %d B: %v", size, err)
			}
			assertBundle(t, s, "https://big.example/mcp", "", b)
		})
	}
}

func TestBundleTooLarge(t *testing.T) {
	s, _, _ := openMem(t)
	b := oauthBundle("https://big.example/mcp", "huge", MaxBundleSize)
	if err := saveBundle(s, "https://big.example/mcp", "", b); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Save over MaxBundleSize: got %v, want ErrTooLarge", err)
	}
}

func TestServersAndAccountsSideBySide(t *testing.T) {
	s, mb, _ := openMem(t)
	servers := []string{"https://a.example/mcp", "https://b.example/mcp"}
	accounts := []string{"work", "personal"}
	want := map[[2]string]testBundle{}
	for _, srv := range servers {
		for _, acct := range accounts {
			b := oauthBundle(srv, srv+"/"+acct, 0)
			want[[2]string{srv, acct}] = b
			if err := saveBundle(s, srv, acct, b); err != nil {
				t.Fatalf("Save(%s, %s): %v", srv, acct, err)
			}
		}
	}
	for k, b := range want {
		assertBundle(t, s, k[0], k[1], b)
	}
	if n := len(mb.snapshot()); n != 4 {
		t.Fatalf("keyring items = %d, want 4", n)
	}
	// Deleting one leaves the other three intact.
	if err := s.Delete(servers[0], accounts[1]); err != nil {
		t.Fatal(err)
	}
	delete(want, [2]string{servers[0], accounts[1]})
	for k, b := range want {
		assertBundle(t, s, k[0], k[1], b)
	}
}

func TestDefaultAccount(t *testing.T) {
	s, _, _ := openMem(t)
	b := oauthBundle("https://a.example/mcp", "d", 0)
	if err := saveBundle(s, "https://a.example/mcp", "", b); err != nil {
		t.Fatal(err)
	}
	assertBundle(t, s, "https://a.example/mcp", DefaultAccount, b)
	list, _ := s.List()
	if len(list) != 1 || list[0].Account != DefaultAccount {
		t.Fatalf("List = %+v, want one entry with account %q", list, DefaultAccount)
	}
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes do not apply on Windows")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "mcpauth", "tokens")
	// A pre-existing, too-open directory gets tightened.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Storage{StorageKeyring, StorageFile} {
		s, err := Open(Config{Dir: dir, Storage: mode, Backend: newMemBackend()})
		if err != nil {
			t.Fatal(err)
		}
		if err := saveBundle(s, "https://p.example/"+string(mode), "", oauthBundle("p", "p", 0)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRegistration("https://as.example", "https://p.example/", []byte(`{"client_id":"c"}`)); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("dir mode = %o, want 700", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode = %o, want 600", e.Name(), got)
		}
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
	// 2 entries, index, registrations, store lock.
	if len(names) != 5 {
		t.Errorf("files = %v, want 2 entries + index.json + registrations.json + .lock", names)
	}
}

func TestFileStorage(t *testing.T) {
	dir := t.TempDir()
	// The file backend never touches the keyring: a hanging one proves it.
	s, err := Open(Config{Dir: dir, Storage: StorageFile, Backend: newHangingBackend(t), Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Storage() != StorageFile || s.FallbackReason() != nil {
		t.Fatalf("Storage() = %s, FallbackReason() = %v; want file, nil", s.Storage(), s.FallbackReason())
	}
	b := oauthBundle("https://f.example/mcp", "f", 0)
	if err := saveBundle(s, "https://f.example/mcp", "me", b); err != nil {
		t.Fatal(err)
	}
	assertBundle(t, s, "https://f.example/mcp", "me", b)
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Backend != StorageFile {
		t.Fatalf("List = %+v, want one file-backed entry", list)
	}
	if err := s.Delete("https://f.example/mcp", "me"); err != nil {
		t.Fatal(err)
	}
}

// Keyring entries stay readable when the store is reopened in file mode,
// but a keyring store refuses plain entries (issue 20: anyone who can
// write the folder could plant one); List reports each entry's backend.
func TestMixedBackends(t *testing.T) {
	dir := t.TempDir()
	mb := newMemBackend()
	ks, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: mb})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Open(Config{Dir: dir, Storage: StorageFile, Backend: mb})
	if err != nil {
		t.Fatal(err)
	}
	kb, fb := oauthBundle("https://k.example", "k", 0), oauthBundle("https://f.example", "f", 0)
	if err := saveBundle(ks, "https://k.example", "", kb); err != nil {
		t.Fatal(err)
	}
	if err := saveBundle(fs, "https://f.example", "", fb); err != nil {
		t.Fatal(err)
	}
	assertBundle(t, fs, "https://k.example", "", kb)
	assertBundle(t, fs, "https://f.example", "", fb)
	if _, err := loadBundle(ks, "https://f.example", ""); !errors.Is(err, ErrPlaintextEntry) {
		t.Fatalf("keyring store loaded a plain entry: %v", err)
	}
	list, err := ks.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Storage{}
	for _, e := range list {
		got[e.Server] = e.Backend
	}
	if got["https://k.example"] != StorageKeyring || got["https://f.example"] != StorageFile || len(got) != 2 {
		t.Fatalf("List backends = %v", got)
	}
}

func TestListAfterOverwriteAndDelete(t *testing.T) {
	s, _, clk := openMem(t)
	b1 := oauthBundle("https://a.example", "1", 0)
	if err := saveBundle(s, "https://a.example", "x", b1); err != nil {
		t.Fatal(err)
	}
	if err := saveBundle(s, "https://b.example", "y", oauthBundle("https://b.example", "2", 0)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	key := testBundle{Kind: "api_key", APIKey: "sk-live-123"}
	if err := saveBundle(s, "https://a.example", "x", key); err != nil { // overwrite: oauth -> api key
		t.Fatal(err)
	}
	if err := s.Delete("https://b.example", "y"); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []EntryInfo{{Server: "https://a.example", Account: "x", Backend: StorageKeyring, UpdatedAt: t0.Add(time.Hour), Meta: []byte(`{"kind":"api_key"}`)}}
	if g, w := mustJSON(t, list), mustJSON(t, want); g != w {
		t.Fatalf("List = %s, want %s", g, w)
	}
	assertBundle(t, s, "https://a.example", "x", key)

	// A row whose file vanished (crash between file removal and index
	// update) is not listed.
	if err := os.Remove(filepath.Join(s.Dir(), s.entryFile("https://a.example", "x"))); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Fatalf("List with missing file = %+v, want empty", list)
	}
	if err := s.Delete("https://a.example", "x"); err != nil {
		t.Fatalf("Delete of index-only row: %v", err)
	}
}

// The metadata given to Save is listed as it was given, beside the store's
// own members, and an index written when the store still knew the
// credential's fields lists them as metadata.
func TestListMeta(t *testing.T) {
	s, _, _ := openMem(t)
	b := oauthBundle("https://a.example", "e", 0)
	if err := saveBundle(s, "https://a.example", "", b); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	var m testMeta
	if err := json.Unmarshal(list[0].Meta, &m); err != nil || !m.Expiry.Equal(b.Expiry) || m.Kind != "oauth" {
		t.Fatalf("List[0].Meta = %s (%v), want expiry %s kind oauth", list[0].Meta, err, b.Expiry)
	}

	old := `{"version":1,"entries":[{"server":"https://o.example/mcp","account":"default","kind":"oauth","backend":"keyring",` +
		`"expiry":"2026-03-01T13:00:00Z","refreshable":true,"updated_at":"2026-03-01T12:00:00Z","user_id":"u_1","file":"tok-x.json"}]}`
	o, _, _ := openMem(t)
	if err := os.WriteFile(filepath.Join(o.Dir(), "index.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir(), "tok-x.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	list, err = o.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List of an old index = %v, %v", list, err)
	}
	want := `{"expiry":"2026-03-01T13:00:00Z","kind":"oauth","refreshable":true,"user_id":"u_1"}`
	if e := list[0]; e.Server != "https://o.example/mcp" || e.Account != "default" || e.Backend != StorageKeyring ||
		!e.UpdatedAt.Equal(t0) || string(e.Meta) != want {
		t.Fatalf("old row = %+v (meta %s), want meta %s", e, e.Meta, want)
	}
}

func TestParseStorage(t *testing.T) {
	for in, want := range map[string]Storage{"": StorageAuto, "auto": StorageAuto, "keyring": StorageKeyring, "file": StorageFile} {
		if got, err := ParseStorage(in); err != nil || got != want {
			t.Errorf("ParseStorage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseStorage("none"); err == nil {
		t.Error("ParseStorage(none) succeeded, want error")
	}
	if _, err := Open(Config{Dir: t.TempDir(), Storage: "plaintext"}); err == nil {
		t.Error("Open with unknown storage succeeded")
	}
}

// Secrets must not reach error messages (creds tests the formatting).
func TestNoSecretsInOutput(t *testing.T) {
	b := oauthBundle("https://a.example", "s", 0)
	b.AccessToken, b.RefreshToken, b.APIKey = "SECRET-AT", "SECRET-RT", "SECRET-KEY"

	s, _, _ := openMem(t)
	if err := saveBundle(s, "https://a.example", "", b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), s.entryFile("https://a.example", DefaultAccount))
	raw, _ := os.ReadFile(path)
	raw[len(raw)/2] ^= 1
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadBundle(s, "https://a.example", "")
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("Load of damaged entry: %v (want an error without secrets)", err)
	}
}
