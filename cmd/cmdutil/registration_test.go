package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// mapBackend is an in-memory keyring (the real one is tested in keyring/).
type mapBackend struct {
	mu sync.Mutex
	m  map[[2]string]string
}

func (b *mapBackend) Get(s, u string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[[2]string{s, u}]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (b *mapBackend) Set(s, u, v string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[[2]string{s, u}] = v
	return nil
}

func (b *mapBackend) Delete(s, u string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, [2]string{s, u})
	return nil
}

// Issue 20 (2): the secrets of a dynamic registration, as flows hands them
// to the cache, reach no file in clear and come back for the next login.
func TestRegistrationCacheKeepsSecretsOffDisk(t *testing.T) {
	dir := t.TempDir()
	be := &mapBackend{m: map[[2]string]string{}}
	st, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageKeyring, Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	ci := &flows.ClientInformation{ClientID: "c1", ClientSecret: "cs-0123456789", RegistrationAccessToken: "rat-0123456789"}
	ci.TokenEndpointAuthMethod = flows.AuthMethodPost
	if err := (RegistrationCache{Store: st}).Put("https://as.example", "https://r.example/mcp", ci); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), "cs-0123456789") || strings.Contains(string(data), "rat-0123456789") {
			t.Fatalf("%s holds a registration secret in clear", filepath.Base(f))
		}
	}
	st2, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageKeyring, Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := RegistrationCache{Store: st2}.Get("https://as.example", "https://r.example/mcp")
	if !ok || got.ClientID != "c1" || got.ClientSecret != ci.ClientSecret || got.RegistrationAccessToken != ci.RegistrationAccessToken || got.TokenEndpointAuthMethod != flows.AuthMethodPost {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
}
