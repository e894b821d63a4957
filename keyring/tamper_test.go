package keyring

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func entryPath(s *Store, server, account string) string {
	return filepath.Join(s.Dir(), s.entryFile(server, account))
}

func readEnv(t *testing.T, path string) envelope {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

func writeEnv(t *testing.T, path string, env envelope) {
	t.Helper()
	raw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTamperedEntryRejected(t *testing.T) {
	const srv = "https://t.example/mcp"
	tests := []struct {
		name   string
		tamper func(*envelope)
		want   error // default ErrInvalidEntry
	}{
		{"flipped ciphertext bit", func(e *envelope) { e.Ciphertext[0] ^= 0x80 }, nil},
		{"flipped tag bit", func(e *envelope) { e.Ciphertext[len(e.Ciphertext)-1] ^= 1 }, nil},
		{"truncated ciphertext", func(e *envelope) { e.Ciphertext = e.Ciphertext[:len(e.Ciphertext)-5] }, nil},
		{"changed nonce", func(e *envelope) { e.Nonce[0] ^= 1 }, nil},
		{"short nonce", func(e *envelope) { e.Nonce = e.Nonce[:4] }, nil},
		// A keyring store reads no plain entry, so this never decodes.
		{"backend set to file", func(e *envelope) { e.Backend = StorageFile }, ErrPlaintextEntry},
		{"unknown backend", func(e *envelope) { e.Backend = "tpm" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := openMem(t)
			if err := saveBundle(s, srv, "", oauthBundle(srv, "t", 0)); err != nil {
				t.Fatal(err)
			}
			p := entryPath(s, srv, DefaultAccount)
			env := readEnv(t, p)
			tt.tamper(&env)
			writeEnv(t, p, env)
			want := tt.want
			if want == nil {
				want = ErrInvalidEntry
			}
			if _, err := loadBundle(s, srv, ""); !errors.Is(err, want) {
				t.Fatalf("Load: got %v, want %v", err, want)
			}
			// Delete still works on a damaged entry: the way out for the user.
			if err := s.Delete(srv, ""); err != nil {
				t.Fatalf("Delete damaged entry: %v", err)
			}
		})
	}
}

func TestGarbageEntryRejected(t *testing.T) {
	s, _, _ := openMem(t)
	const srv = "https://g.example"
	if err := saveBundle(s, srv, "", oauthBundle(srv, "g", 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entryPath(s, srv, DefaultAccount), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadBundle(s, srv, ""); !errors.Is(err, ErrInvalidEntry) {
		t.Fatalf("Load: got %v, want ErrInvalidEntry", err)
	}
}

// A file copied over another entry's file is rejected, both as-is (its
// envelope names the other entry) and with the envelope rewritten.
func TestSwappedEntryRejected(t *testing.T) {
	for _, mode := range []Storage{StorageKeyring, StorageFile} {
		t.Run(string(mode), func(t *testing.T) {
			mb := newMemBackend()
			s, err := Open(Config{Dir: t.TempDir(), Storage: mode, Backend: mb})
			if err != nil {
				t.Fatal(err)
			}
			const a, b = "https://a.example", "https://b.example"
			if err := saveBundle(s, a, "u", oauthBundle(a, "A", 0)); err != nil {
				t.Fatal(err)
			}
			if err := saveBundle(s, b, "u", oauthBundle(b, "B", 0)); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(entryPath(s, a, "u"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(entryPath(s, b, "u"), raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := loadBundle(s, b, "u"); !errors.Is(err, ErrInvalidEntry) {
				t.Fatalf("Load of swapped file: got %v, want ErrInvalidEntry", err)
			}
		})
	}
}

// The AAD binds the ciphertext to (server, account): even an attacker who
// also copies the key and rewrites the clear envelope fields gets nothing.
func TestAADBindsServerAndAccount(t *testing.T) {
	s, mb, _ := openMem(t)
	const a, b = "https://a.example", "https://b.example"
	if err := saveBundle(s, a, "u", oauthBundle(a, "A", 0)); err != nil {
		t.Fatal(err)
	}
	keyA, err := mb.Get("mcpauth:"+a, "u")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range [][2]string{{b, "u"}, {a, "v"}} {
		if err := mb.Set("mcpauth:"+target[0], target[1], keyA); err != nil {
			t.Fatal(err)
		}
		env := readEnv(t, entryPath(s, a, "u"))
		env.Server, env.Account = target[0], target[1]
		writeEnv(t, entryPath(s, target[0], target[1]), env)
		if _, err := loadBundle(s, target[0], target[1]); !errors.Is(err, ErrInvalidEntry) {
			t.Fatalf("Load(%v) with copied key and rewritten envelope: got %v, want ErrInvalidEntry", target, err)
		}
	}
}

func TestMissingKeyIsNotFound(t *testing.T) {
	s, mb, _ := openMem(t)
	const srv = "https://m.example"
	if err := saveBundle(s, srv, "", oauthBundle(srv, "m", 0)); err != nil {
		t.Fatal(err)
	}
	if err := mb.Delete("mcpauth:"+srv, DefaultAccount); err != nil {
		t.Fatal(err)
	}
	if _, err := loadBundle(s, srv, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load with key removed from keyring: got %v, want ErrNotFound", err)
	}
	// Saving again heals the entry with a fresh key.
	b := oauthBundle(srv, "m2", 0)
	if err := saveBundle(s, srv, "", b); err != nil {
		t.Fatal(err)
	}
	assertBundle(t, s, srv, "", b)
}

func TestNewerLayoutRefused(t *testing.T) {
	s, _, _ := openMem(t)
	const srv = "https://v.example"
	if err := saveBundle(s, srv, "", oauthBundle(srv, "v", 0)); err != nil {
		t.Fatal(err)
	}
	p := entryPath(s, srv, DefaultAccount)
	env := readEnv(t, p)
	env.Version = layoutVersion + 1
	writeEnv(t, p, env)
	_, err := loadBundle(s, srv, "")
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Load of newer layout: got %v, want a version error", err)
	}
}
