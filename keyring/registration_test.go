package keyring

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, g) != mustJSON(t, w) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRegistrationCache(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	const iss = "https://as.example"
	if _, ok := s.GetRegistration(iss, "https://r1.example"); ok {
		t.Fatal("empty cache returned a registration")
	}
	if err := s.PutRegistration(iss, "https://r1.example", []byte(`{"client_id":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRegistration(iss, "https://r2.example", []byte(`{"client_id":"c2"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRegistration("https://other-as.example", "https://r1.example", []byte(`{"client_id":"c3"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRegistration(iss, "https://r1.example", []byte(`{"client_id":"c1b","redirect_uris":["http://127.0.0.1:1/cb"]}`)); err != nil {
		t.Fatal(err)
	}

	// A second Store (another CLI run) sees the same cache.
	s2, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ iss, res, want string }{
		{iss, "https://r1.example", `{"client_id":"c1b","redirect_uris":["http://127.0.0.1:1/cb"]}`},
		{iss, "https://r2.example", `{"client_id":"c2"}`},
		{"https://other-as.example", "https://r1.example", `{"client_id":"c3"}`},
	} {
		got, ok := s2.GetRegistration(tt.iss, tt.res)
		if !ok {
			t.Fatalf("GetRegistration(%s, %s) missing", tt.iss, tt.res)
		}
		assertJSONEqual(t, got, tt.want)
	}

	if err := s2.DeleteRegistration(iss, "https://r1.example"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.GetRegistration(iss, "https://r1.example"); ok {
		t.Fatal("deleted registration still returned")
	}
	if _, ok := s.GetRegistration(iss, "https://r2.example"); !ok {
		t.Fatal("DeleteRegistration removed a neighbour")
	}
	if err := s.DeleteRegistration(iss, "https://never.example"); err != nil {
		t.Fatalf("DeleteRegistration of missing: %v", err)
	}
}

func TestRegistrationRejectsBadInput(t *testing.T) {
	s, err := Open(Config{Dir: t.TempDir(), Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRegistration("https://as.example", "r", []byte(`{"client_id":`)); err == nil {
		t.Error("PutRegistration accepted invalid JSON")
	}
	if err := s.PutRegistration("", "r", []byte(`{}`)); err == nil {
		t.Error("PutRegistration accepted an empty issuer")
	}
	big := `{"x":"` + strings.Repeat("a", MaxRegistrationSize) + `"}`
	if err := s.PutRegistration("https://as.example", "r", []byte(big)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("PutRegistration of %d bytes: got %v, want ErrTooLarge", len(big), err)
	}
}

// The cache is only a cache: a corrupt file reads as empty and the next Put
// replaces it.
func TestRegistrationCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "registrations.json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.GetRegistration("https://as.example", "r"); ok {
		t.Fatal("corrupt cache returned a registration")
	}
	if err := s.PutRegistration("https://as.example", "r", []byte(`{"client_id":"c"}`)); err != nil {
		t.Fatal(err)
	}
	got, ok := s.GetRegistration("https://as.example", "r")
	if !ok {
		t.Fatal("registration missing after Put over corrupt file")
	}
	assertJSONEqual(t, got, `{"client_id":"c"}`)
}
