package sqlstore

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// snapshot is everything TestReopen writes, read back through the Store.
type snapshot struct {
	Client  store.Client
	Code    store.AuthCode
	Device  store.DeviceCode
	User    store.User
	Key     store.APIKey
	Revoked bool
	Secret  []byte
	Counter int64
}

func readSnapshot(t *testing.T, s *Store) snapshot {
	t.Helper()
	ctx := t.Context()
	var snap snapshot
	var err error
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	snap.Client, err = s.GetClient(ctx, "client-1")
	check("GetClient", err)
	snap.Code, err = s.GetAuthCode(ctx, "code-1")
	check("GetAuthCode", err)
	snap.Device, err = s.GetDeviceCodeByUserCode(ctx, "uc-1")
	check("GetDeviceCodeByUserCode", err)
	snap.User, err = s.GetUserBySubject(ctx, "idp|ada")
	check("GetUserBySubject", err)
	snap.Key, err = s.GetAPIKeyByHash(ctx, "key-hash")
	check("GetAPIKeyByHash", err)
	snap.Revoked, err = s.IsTokenRevoked(ctx, "jti-revoked")
	check("IsTokenRevoked", err)
	snap.Secret, err = s.GetOrCreateSecret(ctx, "jwt", func() ([]byte, error) { return []byte("regenerated"), nil })
	check("GetOrCreateSecret", err)
	snap.Counter, err = s.AddCounter(ctx, "offset", 0)
	check("AddCounter", err)
	return snap
}

// TestReopen: what one process wrote to a file, the next one reads intact.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	ctx := t.Context()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	writes := []error{
		s.CreateClient(ctx, store.Client{ID: "client-1", Name: "CLI", RedirectURIs: []string{"http://127.0.0.1/cb"},
			GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"}, Scope: "mcp",
			TokenEndpointAuthMethod: "none", CreatedAt: now}),
		s.CreateAuthCode(ctx, store.AuthCode{Hash: "code-1", ClientID: "client-1", RedirectURI: "http://127.0.0.1/cb",
			CodeChallenge: "challenge", Scope: "mcp", UserID: "user-1", CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}),
		s.CreateDeviceCode(ctx, store.DeviceCode{Hash: "dc-1", UserCodeHash: "uc-1", ClientID: "client-1", Scope: "mcp",
			Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: now, ExpiresAt: now.Add(900 * time.Second)}),
		s.UpsertUser(ctx, store.User{ID: "user-1", Name: "Ada", Subject: "idp|ada", CreatedAt: now}),
		s.SetAPIKey(ctx, store.APIKey{UserID: "user-1", Hash: "key-hash", Sealed: []byte{1, 2, 3}, CreatedAt: now}),
		s.RevokeToken(ctx, "jti-revoked", now.Add(24*time.Hour)),
	}
	_, err = s.ConsumeAuthCode(ctx, "code-1", store.Redemption{ClientID: "client-1", RedirectURI: "http://127.0.0.1/cb", CodeChallenge: "challenge",
		Now: now.Add(time.Minute), TokenID: "jti-1", TokenExp: now.Add(24 * time.Hour)})
	writes = append(writes, err)
	_, err = s.UpdateDeviceCode(ctx, "dc-1", func(d store.DeviceCode) (store.DeviceCode, error) {
		d.Status, d.UserID, d.LastPollAt = store.DeviceApproved, "user-1", now.Add(5*time.Second)
		return d, nil
	})
	writes = append(writes, err)
	_, err = s.GetOrCreateSecret(ctx, "jwt", func() ([]byte, error) { return []byte("signing-key"), nil })
	writes = append(writes, err)
	_, err = s.AddCounter(ctx, "offset", 1234)
	writes = append(writes, err)
	for i, err := range writes {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	before := readSnapshot(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	after := readSnapshot(t, s)
	if !reflect.DeepEqual(after, before) {
		t.Errorf("after reopen:\n got %+v\nwant %+v", after, before)
	}
	// And the values are the ones written, not just stable.
	if !after.Code.Used || after.Code.TokenID != "jti-1" || after.Device.Status != store.DeviceApproved ||
		!after.Revoked || string(after.Secret) != "signing-key" || after.Counter != 1234 ||
		!after.Client.CreatedAt.Equal(now) || after.Key.UserID != "user-1" {
		t.Errorf("reopened values differ from what was written: %+v", after)
	}
	if got := schemaVersions(t, s); !reflect.DeepEqual(got, allVersions()) {
		t.Errorf("schema_migrations after reopen = %v, want %v (each step once)", got, allVersions())
	}
}

func schemaVersions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func allVersions() []int {
	vs := make([]int, len(migrations))
	for i := range vs {
		vs[i] = i + 1
	}
	return vs
}

// A database migrated by a newer binary is refused rather than misread.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	s := openPath(t, path)
	future := len(migrations) + 1
	if _, err := s.db.ExecContext(t.Context(), `INSERT INTO schema_migrations (version) VALUES (?)`, future); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := OpenSQLite(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("opening a version %d database: err = %v, want a refusal", future, err)
	}
}

// Several processes starting at once on a new file: the IMMEDIATE migration
// transaction serialises them, each step runs once, all can write.
func TestSQLiteConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = OpenSQLite(context.Background(), path) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("opener %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	ctx := t.Context()
	if err := stores[0].UpsertUser(ctx, store.User{ID: "u", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	if u, err := stores[n-1].GetUser(ctx, "u"); err != nil || u.Subject != "s" {
		t.Fatalf("another opener does not see the write: %+v, %v", u, err)
	}
	if got := schemaVersions(t, stores[0]); !reflect.DeepEqual(got, allVersions()) {
		t.Errorf("schema_migrations = %v, want %v", got, allVersions())
	}
}

// Open with a plain path picks SQLite.
func TestOpenPicksSQLite(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "via-open.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.d.name != "sqlite" {
		t.Errorf("Open(path) chose %s, want sqlite", s.d.name)
	}
}

func openPath(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
