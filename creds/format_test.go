package creds

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/keyring"
)

// testdata/store-v1 is a file-mode store written by the keyring package
// as it was before this package existed (when it still held the bundle
// type): every field of a user login, a machine login and an API key.
// Those entries must load with every field, list with their metadata, and
// be written back with the same member names, so stored credentials and
// a downgrade both keep working.
func TestStoreWrittenBeforeCredsLoads(t *testing.T) {
	dir := copyStore(t, "testdata/store-v1")
	st, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	want := map[string]Bundle{
		"https://mcp.example/mcp": {Kind: KindOAuth, Issuer: "https://as.example", Resource: "https://mcp.example/mcp",
			AccessToken: "at-user", TokenType: "DPoP", RefreshToken: "rt-user", Expiry: exp, Scope: "mcp offline_access",
			RefreshExpiry: exp.Add(720 * time.Hour), TokenEndpoint: "https://as.example/token", RevocationEndpoint: "https://as.example/revoke",
			Client: &ClientInfo{ClientID: "cid", ClientSecret: "csecret", ClientSecretExpiresAt: exp.Add(24 * time.Hour),
				TokenEndpointAuthMethod: "client_secret_post", RedirectURIs: []string{"http://127.0.0.1:33418/callback"}},
			UserID: "u_1", UserName: "Mona", DPoPKey: "dpop-key-pkcs8"},
		"https://m.example/mcp": {Kind: KindOAuth, Issuer: "https://as.example", Resource: "https://m.example/mcp", AccessToken: "at-m",
			TokenType: "Bearer", Expiry: exp, Client: &ClientInfo{ClientID: "robot", TokenEndpointAuthMethod: "private_key_jwt"},
			Grant: &GrantInfo{Type: GrantEnterprise, TokenEndpoint: "https://as.example/token", Scope: "mcp", NoResource: true,
				PrivateKeyFile: "/keys/robot.pem", SigningAlg: "ES256", KeyID: "k1", AssertionAudience: "issuer", AssertionFile: "/a.jwt",
				AssertionEnv: "ASSERTION", IDTokenFile: "/id.jwt", IdPTokenEndpoint: "https://idp.example/token",
				IdPClient: &ClientInfo{ClientID: "idp-c", ClientSecret: "idp-s"}, AllowInsecureKeyFile: true}},
		"https://k.example/mcp": {Kind: KindAPIKey, Resource: "https://k.example/mcp", APIKey: "sk-1"},
	}
	for server, w := range want {
		got, err := Load(st, server, "")
		if err != nil {
			t.Fatalf("Load(%s): %v", server, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Load(%s) =\n%#v\nwant\n%#v", server, jsonOf(t, got), jsonOf(t, w))
		}
	}

	list, err := List(st)
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %v, %v", list, err)
	}
	wantList := map[string]Summary{
		"https://k.example/mcp":   {Kind: KindAPIKey},
		"https://m.example/mcp":   {Kind: KindOAuth, Expiry: exp},
		"https://mcp.example/mcp": {Kind: KindOAuth, Expiry: exp, Refreshable: true, RefreshExpiry: exp.Add(720 * time.Hour), UserID: "u_1", UserName: "Mona"},
	}
	for _, e := range list {
		if !reflect.DeepEqual(e.Summary, wantList[e.Server]) || e.Backend != keyring.StorageFile || e.Account != keyring.DefaultAccount {
			t.Errorf("List: %s = %+v, want %+v", e.Server, e, wantList[e.Server])
		}
	}

	// Written back, an entry holds the same JSON as before, member for
	// member, and so does its index row.
	for server := range want {
		before := entryBundleJSON(t, dir, server)
		b, _ := Load(st, server, "")
		if err := Save(st, server, "", b); err != nil {
			t.Fatal(err)
		}
		if after := entryBundleJSON(t, dir, server); after != before {
			t.Errorf("%s written back:\n%s\nwas\n%s", server, after, before)
		}
	}
	oldIndex := indexRows(t, "testdata/store-v1")
	newIndex := indexRows(t, dir)
	if !reflect.DeepEqual(oldIndex, newIndex) {
		t.Errorf("index written back:\n%v\nwas\n%v", newIndex, oldIndex)
	}
}

// copyStore copies a store fixture into a private temporary directory (the
// store refuses a folder others may write).
func copyStore(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tokens")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(from, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture %s: %v", from, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// entryBundleJSON is the bundle inside server's file-mode entry, re-encoded
// with sorted members.
func entryBundleJSON(t *testing.T, dir, server string) string {
	t.Helper()
	for _, f := range must(filepath.Glob(filepath.Join(dir, "tok-*.json"))) {
		var env struct {
			Server string          `json:"server"`
			Bundle json.RawMessage `json:"bundle"`
		}
		if err := json.Unmarshal(must(os.ReadFile(f)), &env); err != nil {
			t.Fatal(err)
		}
		if env.Server == server {
			var m map[string]any
			if err := json.Unmarshal(env.Bundle, &m); err != nil {
				t.Fatal(err)
			}
			return jsonOf(t, m)
		}
	}
	t.Fatalf("no entry file for %s", server)
	return ""
}

// indexRows is the index's rows without their timestamps.
func indexRows(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var idx struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dir, "index.json"))), &idx); err != nil {
		t.Fatal(err)
	}
	for _, r := range idx.Entries {
		delete(r, "updated_at")
	}
	return idx.Entries
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
