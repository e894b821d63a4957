package keyring

import (
	"errors"
	"strings"
	"testing"
)

// Issue 20 (1): a plain-file entry, which anyone able to write the tokens
// folder can plant, is read only by a store the user put in file mode.
func TestPlainEntryReadOnlyInFileMode(t *testing.T) {
	const srv = "https://planted.example/mcp"
	dir := t.TempDir()
	plantStore, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	planted := oauthBundle(srv, "attacker", 0)
	if err := saveBundle(plantStore, srv, "", planted); err != nil {
		t.Fatal(err)
	}
	file := entryPath(plantStore, srv, DefaultAccount)

	noKeyring := failingBackend{err: ErrNoSessionBus}
	tests := []struct {
		name  string
		cfg   Config
		loads bool
	}{
		{"keyring", Config{Storage: StorageKeyring, Backend: newMemBackend()}, false},
		{"auto, keyring works", Config{Storage: StorageAuto, Backend: newMemBackend()}, false},
		{"auto, no keyring, read-only command", Config{Storage: StorageAuto, Backend: noKeyring, KeyringOptional: true}, false},
		{"auto, no keyring, fallback agreed", Config{Storage: StorageAuto, Backend: noKeyring, AllowFileFallback: true}, true},
		{"file", Config{Storage: StorageFile, Backend: noKeyring}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Dir = dir
			s, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.loads {
				assertBundle(t, s, srv, "", planted)
				return
			}
			_, err = loadBundle(s, srv, "")
			if !errors.Is(err, ErrPlaintextEntry) {
				t.Fatalf("Load: got %v, want ErrPlaintextEntry", err)
			}
			for _, want := range []string{file, "--storage=file"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if strings.Contains(err.Error(), planted.AccessToken) {
				t.Errorf("error echoes the token")
			}
			// Still listed (status marks it) and deletable (logout).
			if list, err := s.List(); err != nil || len(list) != 1 || list[0].Backend != StorageFile {
				t.Fatalf("List = %+v, %v", list, err)
			}
		})
	}
}
