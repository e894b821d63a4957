package storetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

func testUsers(t *testing.T, s store.Store) {
	ctx := t.Context()
	u := store.User{ID: "user-1", Name: "Ada", Subject: "https://idp.example|ada", CreatedAt: base}
	must(t, "UpsertUser", s.UpsertUser(ctx, u))
	stored(t, "GetUser", s.GetUser, u.ID, u, normUser)
	stored(t, "GetUserBySubject", s.GetUserBySubject, u.Subject, u, normUser)

	// Upserting updates Name and Subject and keeps the first CreatedAt.
	upd := store.User{ID: "user-1", Name: "Ada L.", Subject: "https://idp.example|ada2", CreatedAt: base.Add(time.Hour)}
	must(t, "UpsertUser update", s.UpsertUser(ctx, upd))
	want := upd
	want.CreatedAt = u.CreatedAt
	stored(t, "GetUser after update", s.GetUser, u.ID, want, normUser)
	stored(t, "GetUserBySubject after update", s.GetUserBySubject, upd.Subject, want, normUser)
	absent(t, "GetUserBySubject old subject", s.GetUserBySubject, u.Subject)

	// A subject names one user.
	other := store.User{ID: "user-2", Name: "Eve", Subject: upd.Subject, CreatedAt: base}
	wantErr(t, "UpsertUser taken subject", s.UpsertUser(ctx, other), store.ErrAlreadyExists)
	absent(t, "GetUser after failed upsert", s.GetUser, other.ID)

	absent(t, "GetUser unknown", s.GetUser, "no-such-user")
	absent(t, "GetUserBySubject unknown", s.GetUserBySubject, "no-such-subject")
}

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	absent(t, "GetAPIKeyByUser before any", s.GetAPIKeyByUser, "user-1")
	absent(t, "GetAPIKeyByHash unknown", s.GetAPIKeyByHash, "no-such-hash")

	sealed := []byte{0, 1, 2, 0xff}
	k1 := store.APIKey{UserID: "user-1", Hash: "hash-1", Sealed: sealed, CreatedAt: base}
	must(t, "SetAPIKey", s.SetAPIKey(ctx, k1))
	k1.Sealed = bytes.Clone(sealed)
	sealed[0] = 42 // the caller reuses its buffer
	got := stored(t, "GetAPIKeyByHash", s.GetAPIKeyByHash, k1.Hash, k1, normKey)
	got.Sealed[1] = 42 // the caller edits a result
	stored(t, "GetAPIKeyByUser", s.GetAPIKeyByUser, k1.UserID, k1, normKey)

	// Replacing: the old hash fails at once.
	k2 := store.APIKey{UserID: "user-1", Hash: "hash-2", Sealed: []byte("sealed-2"), CreatedAt: base.Add(time.Hour)}
	must(t, "SetAPIKey replace", s.SetAPIKey(ctx, k2))
	absent(t, "GetAPIKeyByHash old key", s.GetAPIKeyByHash, k1.Hash)
	stored(t, "GetAPIKeyByHash new key", s.GetAPIKeyByHash, k2.Hash, k2, normKey)
	stored(t, "GetAPIKeyByUser after replace", s.GetAPIKeyByUser, k2.UserID, k2, normKey)

	// A hash belongs to one user.
	k3 := store.APIKey{UserID: "user-2", Hash: k2.Hash, CreatedAt: base}
	wantErr(t, "SetAPIKey taken hash", s.SetAPIKey(ctx, k3), store.ErrAlreadyExists)
	absent(t, "GetAPIKeyByUser after failed set", s.GetAPIKeyByUser, "user-2")

	// Setting the same hash again for its owner is allowed; empty Sealed reads back nil.
	k4 := store.APIKey{UserID: "user-1", Hash: k2.Hash, Sealed: []byte{}, CreatedAt: base.Add(2 * time.Hour)}
	must(t, "SetAPIKey same hash", s.SetAPIKey(ctx, k4))
	k4.Sealed = nil
	stored(t, "GetAPIKeyByHash after re-set", s.GetAPIKeyByHash, k4.Hash, k4, normKey)

	// Re-sealing changes Sealed only, and only while the hash still matches.
	must(t, "ResealAPIKey", s.ResealAPIKey(ctx, "user-1", k4.Hash, []byte("resealed")))
	want := k4
	want.Sealed = []byte("resealed")
	stored(t, "GetAPIKeyByHash after reseal", s.GetAPIKeyByHash, k4.Hash, want, normKey)
	wantErr(t, "ResealAPIKey regenerated key", s.ResealAPIKey(ctx, "user-1", k1.Hash, []byte("stale")), store.ErrNotFound)
	wantErr(t, "ResealAPIKey unknown user", s.ResealAPIKey(ctx, "no-such-user", k4.Hash, []byte("x")), store.ErrNotFound)
	stored(t, "GetAPIKeyByUser after refused reseal", s.GetAPIKeyByUser, "user-1", want, normKey)

	k5 := store.APIKey{UserID: "user-2", Hash: "hash-5", Sealed: []byte("sealed-5"), CreatedAt: base}
	must(t, "SetAPIKey user-2", s.SetAPIKey(ctx, k5))
	all, err := s.ListAPIKeys(ctx)
	must(t, "ListAPIKeys", err)
	byUser := map[string]store.APIKey{}
	for _, k := range all {
		byUser[k.UserID] = k
	}
	if len(all) != 2 || len(byUser) != 2 {
		t.Fatalf("ListAPIKeys = %d keys for %d users, want 2 and 2", len(all), len(byUser))
	}
	same(t, "ListAPIKeys user-1", byUser["user-1"], want, normKey)
	same(t, "ListAPIKeys user-2", byUser["user-2"], k5, normKey)
}

func testRevocation(t *testing.T, s store.Store) {
	ctx := t.Context()
	revoked, err := s.IsTokenRevoked(ctx, "jti-1")
	must(t, "IsTokenRevoked", err)
	if revoked {
		t.Fatal("IsTokenRevoked before revocation = true")
	}
	exp := base.Add(24 * time.Hour)
	must(t, "RevokeToken", s.RevokeToken(ctx, "jti-1", exp))
	must(t, "RevokeToken again", s.RevokeToken(ctx, "jti-1", base.Add(time.Hour))) // earlier expiry must not shorten it
	for jti, want := range map[string]bool{"jti-1": true, "jti-2": false} {
		got, err := s.IsTokenRevoked(ctx, jti)
		must(t, "IsTokenRevoked", err)
		if got != want {
			t.Errorf("IsTokenRevoked(%q) = %v, want %v", jti, got, want)
		}
	}
	_, err = s.GC(ctx, base.Add(2*time.Hour))
	must(t, "GC", err)
	if got, err := s.IsTokenRevoked(ctx, "jti-1"); err != nil || !got {
		t.Errorf("IsTokenRevoked after GC before the later expiry = %v, %v; want true", got, err)
	}
}

func testSecrets(t *testing.T, s store.Store) {
	ctx := t.Context()
	calls := 0
	gen := func(v string) func() ([]byte, error) {
		return func() ([]byte, error) { calls++; return []byte(v), nil }
	}
	got, err := s.GetOrCreateSecret(ctx, "jwt", gen("first"))
	must(t, "GetOrCreateSecret", err)
	if string(got) != "first" || calls != 1 {
		t.Fatalf("first GetOrCreateSecret = %q with %d gen calls, want %q and 1", got, calls, "first")
	}
	got[0] = 'X' // the caller edits a result
	got, err = s.GetOrCreateSecret(ctx, "jwt", gen("second"))
	must(t, "GetOrCreateSecret", err)
	if string(got) != "first" || calls != 1 {
		t.Errorf("second GetOrCreateSecret = %q with %d gen calls, want %q and 1", got, calls, "first")
	}
	got, err = s.GetOrCreateSecret(ctx, "other", gen("other-value"))
	must(t, "GetOrCreateSecret other", err)
	if string(got) != "other-value" {
		t.Errorf("GetOrCreateSecret(other) = %q", got)
	}

	// A failing gen stores nothing; its error comes back wrapped.
	errNoEntropy := errors.New("no entropy")
	_, err = s.GetOrCreateSecret(ctx, "failing", func() ([]byte, error) { return nil, errNoEntropy })
	wantErr(t, "GetOrCreateSecret failing gen", err, errNoEntropy)
	got, err = s.GetOrCreateSecret(ctx, "failing", gen("recovered"))
	must(t, "GetOrCreateSecret after failure", err)
	if string(got) != "recovered" {
		t.Errorf("GetOrCreateSecret after failing gen = %q, want %q", got, "recovered")
	}
}
