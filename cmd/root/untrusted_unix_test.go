//go:build unix

package root_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/internal/testenv"
	"github.com/mcpauth/mcpauth/keyring"
)

// Issue 30 (8): someone who could write the config folder once (a 0777
// folder before its first use) plants "storage: file" and a token of his
// own. Files and folders of another user (not root), and a symlinked
// settings.json, are refused: token and ping exit 7 naming the file, print
// nothing, and the planted token never reaches the server.
func TestPlantedConfigFolderRefused(t *testing.T) {
	var credentials atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			credentials.Add(1)
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	const planted = "at-attacker"

	// plant writes what the attacker wants read: settings choosing file
	// storage and a plain entry holding his token.
	plant := func(t *testing.T) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "tokens")
		if err := keyring.SaveSettings(dir, keyring.Settings{Storage: keyring.StorageFile}); err != nil {
			t.Fatal(err)
		}
		st, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageFile})
		if err != nil {
			t.Fatal(err)
		}
		b := creds.Bundle{Issuer: srv.URL, Resource: resource, AccessToken: planted, TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
		if err := creds.Save(st, creds.ServerKey(resource), "", b); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	entry := func(dir string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "tok-*.json"))
		if len(m) != 1 {
			t.Fatalf("entry files %v", m)
		}
		return m[0]
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, dir string) (named, why string)
	}{
		{"foreign settings.json and entry", func(t *testing.T, dir string) (string, string) {
			testenv.GiveAway(t, keyring.SettingsPath(dir))
			testenv.GiveAway(t, entry(dir))
			return keyring.SettingsPath(dir), "owned by uid 65534"
		}},
		{"foreign entry", func(t *testing.T, dir string) (string, string) {
			testenv.GiveAway(t, entry(dir))
			return entry(dir), "owned by uid 65534"
		}},
		{"foreign folder", func(t *testing.T, dir string) (string, string) {
			testenv.GiveAway(t, dir)
			return dir, "owned by uid 65534"
		}},
		{"symlinked settings.json", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(t.TempDir(), "settings.json")
			if err := os.Rename(keyring.SettingsPath(dir), target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, keyring.SettingsPath(dir)); err != nil {
				t.Fatal(err)
			}
			return keyring.SettingsPath(dir), "symbolic link"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := plant(t)
			named, why := tc.spoil(t, dir)
			c := clitest.New(t, nil)
			c.Vars["MCPAUTH_CONFIG_DIR"] = dir
			delete(c.Vars, "MCPAUTH_STORAGE") // the remembered choice decides
			for _, args := range [][]string{{"token", resource}, {"ping", resource}} {
				code, stdout, stderr := c.Run(args...)
				if code != clierr.ExitStorage || strings.Contains(stdout+stderr, planted) ||
					!strings.Contains(stderr, named) || !strings.Contains(stderr, why) {
					t.Errorf("%v: exit %d, stdout %q, stderr %s; want exit 7 naming %s (%s)", args, code, stdout, stderr, named, why)
				}
			}
			if n := credentials.Load(); n != 0 {
				t.Fatalf("%d requests carried a credential to the server", n)
			}
		})
	}
}
