package storetest

import (
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// testGC builds one record on each side of every rule, runs GC once at now
// and checks that exactly the expired ones went.
func testGC(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	past, future := now.Add(-time.Millisecond), now.Add(time.Millisecond)

	code := func(hash string, expires time.Time, used bool, tokenExp time.Time) {
		c := newAuthCode(hash)
		c.ExpiresAt = expires
		must(t, "CreateAuthCode", s.CreateAuthCode(ctx, c))
		if used {
			_, err := s.ConsumeAuthCode(ctx, hash, redeem(c, "jti-"+hash, tokenExp, base))
			must(t, "ConsumeAuthCode", err)
		}
	}
	code("unused-expired", past, false, time.Time{})         // gone
	code("unused-at-now", now, false, time.Time{})           // kept: "past" is strict
	code("unused-live", future, false, time.Time{})          // kept
	code("used-token-expired", past, true, past)             // gone
	code("used-token-live", past, true, future)              // kept: a replay must still revoke
	code("used-code-live-token-expired", future, true, past) // kept: the code itself is live

	device := func(hash string, expires time.Time) {
		d := newDevice(hash, "uc-"+hash)
		d.ExpiresAt = expires
		must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
	}
	device("device-expired", past) // gone
	device("device-at-now", now)   // kept
	device("device-live", future)  // kept

	must(t, "RevokeToken", s.RevokeToken(ctx, "revoked-expired", past)) // gone
	must(t, "RevokeToken", s.RevokeToken(ctx, "revoked-at-now", now))   // kept
	must(t, "RevokeToken", s.RevokeToken(ctx, "revoked-live", future))  // kept

	// Records GC never touches, however old.
	old := base.Add(-365 * 24 * time.Hour)
	must(t, "CreateClient", s.CreateClient(ctx, store.Client{ID: "client-old", CreatedAt: old}))
	must(t, "MarkClientUsed", s.MarkClientUsed(ctx, "client-old", old)) // unused ones: testUnusedClientGC
	must(t, "UpsertUser", s.UpsertUser(ctx, store.User{ID: "user-old", Subject: "s", CreatedAt: old}))
	must(t, "SetAPIKey", s.SetAPIKey(ctx, store.APIKey{UserID: "user-old", Hash: "key-old", CreatedAt: old}))
	_, err := s.GetOrCreateSecret(ctx, "secret-old", func() ([]byte, error) { return []byte("v"), nil })
	must(t, "GetOrCreateSecret", err)

	n, err := s.GC(ctx, now)
	must(t, "GC", err)
	if n != 4 {
		t.Errorf("GC removed %d records, want 4", n)
	}

	for hash, kept := range map[string]bool{
		"unused-expired": false, "unused-at-now": true, "unused-live": true,
		"used-token-expired": false, "used-token-live": true, "used-code-live-token-expired": true,
	} {
		_, err := s.GetAuthCode(ctx, hash)
		checkKept(t, "auth code "+hash, kept, err)
	}
	for hash, kept := range map[string]bool{"device-expired": false, "device-at-now": true, "device-live": true} {
		_, err := s.GetDeviceCode(ctx, hash)
		checkKept(t, "device code "+hash, kept, err)
		_, err = s.GetDeviceCodeByUserCode(ctx, "uc-"+hash)
		checkKept(t, "device code by user code "+hash, kept, err)
	}
	for jti, kept := range map[string]bool{"revoked-expired": false, "revoked-at-now": true, "revoked-live": true} {
		revoked, err := s.IsTokenRevoked(ctx, jti)
		must(t, "IsTokenRevoked", err)
		if revoked != kept {
			t.Errorf("revocation %s: revoked = %v after GC, want %v", jti, revoked, kept)
		}
	}
	_, err = s.GetClient(ctx, "client-old")
	checkKept(t, "client", true, err)
	_, err = s.GetUser(ctx, "user-old")
	checkKept(t, "user", true, err)
	_, err = s.GetAPIKeyByHash(ctx, "key-old")
	checkKept(t, "api key", true, err)
	v, err := s.GetOrCreateSecret(ctx, "secret-old", func() ([]byte, error) { return []byte("new"), nil })
	if err != nil || string(v) != "v" {
		t.Errorf("secret after GC = %q, %v; want %q", v, err, "v")
	}

	if n, err := s.GC(ctx, now); err != nil || n != 0 {
		t.Errorf("second GC = %d, %v; want 0, nil", n, err)
	}
	// The GC'd user code can be issued again.
	again := newDevice("device-again", "uc-device-expired")
	again.CreatedAt = base // before the old record's expiry: only GC freed it
	must(t, "CreateDeviceCode reusing a collected user code", s.CreateDeviceCode(ctx, again))
}

func checkKept(t *testing.T, what string, kept bool, err error) {
	t.Helper()
	switch {
	case kept && err != nil:
		t.Errorf("%s: want kept, got %v", what, err)
	case !kept:
		wantErr(t, what+" after GC", err, store.ErrNotFound)
	}
}
