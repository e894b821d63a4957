package keyring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	regIssuer   = "https://as.example"
	regResource = "https://r.example/mcp"
	regSecret   = "cs-9f8e7d6c5b4a"
	regRAT      = "rat-0a1b2c3d4e5f"
	regDoc      = `{"client_id":"c1","client_secret":"` + regSecret + `","registration_access_token":"` + regRAT +
		`","client_secret_expires_at":0,"redirect_uris":["http://127.0.0.1:33418/callback"],"token_endpoint_auth_method":"client_secret_post"}`
)

// assertNoSecretOnDisk fails if any file in dir holds a registration secret.
func assertNoSecretOnDisk(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a directory or a lock
		}
		for _, secret := range []string{regSecret, regRAT} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds a registration secret in clear", filepath.Base(f))
			}
		}
	}
}

// Issue 20 (2): a client secret from dynamic registration stays out of
// registrations.json with a keyring, and reads back whole.
func TestRegistrationSecretsSealed(t *testing.T) {
	s, mb, _ := openMem(t)
	if err := s.PutRegistration(regIssuer, regResource, []byte(regDoc)); err != nil {
		t.Fatalf("PutRegistration: %v", err)
	}
	assertNoSecretOnDisk(t, s.Dir())
	got, ok := s.GetRegistration(regIssuer, regResource)
	if !ok {
		t.Fatal("registration missing")
	}
	assertJSONEqual(t, got, regDoc)

	// The next run reads it too; a neighbour's Put keeps it sealed.
	s2, err := Open(Config{Dir: s.Dir(), Storage: StorageKeyring, Backend: mb})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.PutRegistration(regIssuer, "https://other.example/mcp", []byte(`{"client_id":"c2"}`)); err != nil {
		t.Fatal(err)
	}
	got, ok = s2.GetRegistration(regIssuer, regResource)
	if !ok {
		t.Fatal("registration missing in the next run")
	}
	assertJSONEqual(t, got, regDoc)
	assertNoSecretOnDisk(t, s.Dir())

	// Sealed to its (issuer, resource): moved to another, it does not open.
	raw, err := os.ReadFile(filepath.Join(s.Dir(), "registrations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf registrationFile
	if err := json.Unmarshal(raw, &rf); err != nil {
		t.Fatal(err)
	}
	for i := range rf.Registrations {
		if rf.Registrations[i].Resource == regResource {
			rf.Registrations[i].Resource = "https://swapped.example/mcp"
		}
	}
	raw, _ = json.Marshal(rf)
	if err := os.WriteFile(filepath.Join(s.Dir(), "registrations.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.GetRegistration(regIssuer, "https://swapped.example/mcp"); ok {
		t.Fatal("a sealed secret opened under another (issuer, resource)")
	}
}

// A registrations.json written by an older build, secret in clear, is
// migrated as soon as a keyring store opens: the secret moves to the
// sealed object and leaves the JSON.
func TestRegistrationSecretsMigrated(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"version":1,"registrations":[` +
		`{"issuer":"` + regIssuer + `","resource":"` + regResource + `","data":` + regDoc + `,"updated_at":"2026-01-01T00:00:00Z"},` +
		`{"issuer":"` + regIssuer + `","resource":"https://public.example/mcp","data":{"client_id":"pub"},"updated_at":"2026-01-01T00:00:00Z"}]}`
	if err := os.WriteFile(filepath.Join(dir, "registrations.json"), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: newMemBackend()})
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecretOnDisk(t, dir)
	got, ok := s.GetRegistration(regIssuer, regResource)
	if !ok {
		t.Fatal("migrated registration missing")
	}
	assertJSONEqual(t, got, regDoc)
	got, ok = s.GetRegistration(regIssuer, "https://public.example/mcp")
	if !ok {
		t.Fatal("public registration lost in the migration")
	}
	assertJSONEqual(t, got, `{"client_id":"pub"}`)
}

// With the keyring failing at write time the secret is not written at all
// rather than written in clear.
func TestRegistrationSecretNotWrittenWithoutKeyring(t *testing.T) {
	s, _, _ := openMem(t)
	s.backend = failingBackend{err: ErrNoSessionBus}
	if err := s.PutRegistration(regIssuer, regResource, []byte(regDoc)); err == nil {
		t.Fatal("PutRegistration succeeded without a keyring to seal the secret")
	}
	assertNoSecretOnDisk(t, s.Dir())
	// A public registration needs no keyring.
	if err := s.PutRegistration(regIssuer, regResource, []byte(`{"client_id":"pub"}`)); err != nil {
		t.Fatalf("public PutRegistration: %v", err)
	}
}

// File mode was chosen for tokens in clear; registrations follow it and
// never touch the keyring.
func TestRegistrationSecretFileMode(t *testing.T) {
	cb := &countingBackend{next: failingBackend{err: ErrNoSessionBus}}
	s, err := Open(Config{Dir: t.TempDir(), Storage: StorageFile, Backend: cb})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRegistration(regIssuer, regResource, []byte(regDoc)); err != nil {
		t.Fatal(err)
	}
	got, ok := s.GetRegistration(regIssuer, regResource)
	if !ok {
		t.Fatal("registration missing")
	}
	assertJSONEqual(t, got, regDoc)
	if n := cb.calls.Load(); n != 0 {
		t.Fatalf("file mode made %d keyring calls", n)
	}
}
