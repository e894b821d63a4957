package creds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/keyring/keyringtest"
)

// Issue 20 (2): the secrets of a dynamic registration, as flows hands them
// to the cache, reach no file in clear and come back for the next login.
func TestRegistrationCacheKeepsSecretsOffDisk(t *testing.T) {
	dir := t.TempDir()
	be := &keyringtest.Memory{}
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
