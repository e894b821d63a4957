package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// Recorder is a store.InvalidationHandler that tells a test what arrived,
// in order, one event a line: "revoked <jti> <exp ms>", "key <user>",
// "unsynced", "resynced".
type Recorder struct{ Events chan string }

// NewRecorder buffers plenty: a test that reads slowly loses nothing.
func NewRecorder() *Recorder { return &Recorder{Events: make(chan string, 1024)} }

func (r *Recorder) Revoked(jti string, exp time.Time) {
	r.Events <- fmt.Sprintf("revoked %s %d", jti, exp.UnixMilli())
}
func (r *Recorder) APIKeyChanged(userID string) { r.Events <- "key " + userID }
func (r *Recorder) Unsynced(error)              { r.Events <- "unsynced" }
func (r *Recorder) Resynced()                   { r.Events <- "resynced" }

// Expect waits up to timeout for want, skipping other events, and fails
// the test if it does not come.
func (r *Recorder) Expect(t testing.TB, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case got := <-r.Events:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within %v", want, timeout)
		}
	}
}

// Watch runs st's watcher for the rest of the test and waits until it is
// synced; it fails the test if st is not a shared store.
func Watch(t testing.TB, st store.Store) *Recorder {
	t.Helper()
	sh, ok := st.(store.Shared)
	if !ok || sh.Invalidations() == nil {
		t.Fatalf("%T is not shared by instances: nothing to watch", st)
	}
	rec := NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sh.Invalidations().WatchInvalidations(ctx, rec)
	}()
	t.Cleanup(func() { cancel(); <-done })
	rec.Expect(t, "unsynced", 5*time.Second)
	rec.Expect(t, "resynced", 5*time.Second)
	return rec
}

// Invalidations is the contract of a shared backend (store.Shared with a
// Watcher): what one instance (a) changes that a credential cache holds
// reaches a watcher of another instance's store (b), however it was
// written. Both name one empty database.
func Invalidations(t *testing.T, a, b store.Store) {
	ctx := t.Context()
	rec := Watch(t, b)
	const wait = 5 * time.Second

	exp := base.Add(time.Hour)
	must(t, "RevokeToken", a.RevokeToken(ctx, "jti-logout", exp))
	rec.Expect(t, fmt.Sprintf("revoked jti-logout %d", exp.UnixMilli()), wait)

	must(t, "SetAPIKey", a.SetAPIKey(ctx, store.APIKey{UserID: "user-1", Hash: "h1", CreatedAt: base}))
	rec.Expect(t, "key user-1", wait)
	must(t, "SetAPIKey again", a.SetAPIKey(ctx, store.APIKey{UserID: "user-1", Hash: "h2", CreatedAt: base}))
	rec.Expect(t, "key user-1", wait)

	first := createRefresh(t, a, "rt-1", "fam-1")
	second := rotate(t, a, first, "rt-2", "jti-2", base.Add(time.Minute))
	_, err := a.RevokeRefreshFamily(ctx, "fam-1")
	must(t, "RevokeRefreshFamily", err)
	for _, tok := range []store.RefreshToken{first, second} {
		rec.Expect(t, fmt.Sprintf("revoked %s %d", tok.TokenID, tok.TokenExp.UnixMilli()), wait)
	}
}
