package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// testClientUsage: a client reads back unused until MarkClientUsed, whose
// first call sets UsedAt for good; an unknown client is ErrNotFound.
func testClientUsage(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := store.Client{ID: "c-usage", Name: "n", RedirectURIs: []string{"https://a.example/cb"}, GrantTypes: []string{"authorization_code"}, CreatedAt: base}
	must(t, "CreateClient", s.CreateClient(ctx, c))
	stored(t, "unused client", s.GetClient, c.ID, c, normClient)
	first := base.Add(time.Minute + 123*time.Millisecond)
	must(t, "MarkClientUsed", s.MarkClientUsed(ctx, c.ID, first))
	must(t, "MarkClientUsed again", s.MarkClientUsed(ctx, c.ID, first.Add(time.Hour)))
	c.UsedAt = first
	stored(t, "used client", s.GetClient, c.ID, c, normClient)
	wantErr(t, "MarkClientUsed of an unknown client", s.MarkClientUsed(ctx, "c-unknown", first), store.ErrNotFound)
	absent(t, "MarkClientUsed created nothing", s.GetClient, "c-unknown")
}

// testUnusedClientGC: GC removes a client never used once it is more than
// UnusedClientLifetime old ("past" is strict), and keeps used clients
// however old.
func testUnusedClientGC(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(store.UnusedClientLifetime + time.Hour)
	cutoff := now.Add(-store.UnusedClientLifetime)
	for id, created := range map[string]time.Time{
		"unused-expired": cutoff.Add(-time.Millisecond), "unused-at-cutoff": cutoff, "unused-young": cutoff.Add(time.Millisecond),
		"used-old": base.Add(-365 * 24 * time.Hour),
	} {
		must(t, "CreateClient", s.CreateClient(ctx, store.Client{ID: id, CreatedAt: created}))
	}
	must(t, "MarkClientUsed", s.MarkClientUsed(ctx, "used-old", base))
	n, err := s.GC(ctx, now)
	must(t, "GC", err)
	if n != 1 {
		t.Errorf("GC removed %d records, want 1", n)
	}
	for id, kept := range map[string]bool{"unused-expired": false, "unused-at-cutoff": true, "unused-young": true, "used-old": true} {
		_, err := s.GetClient(ctx, id)
		checkKept(t, "client "+id, kept, err)
	}
	wantErr(t, "MarkClientUsed of a collected client", s.MarkClientUsed(ctx, "unused-expired", now), store.ErrNotFound)
}

// testConcurrentMarkUsedGC races the first use of expiring clients with
// GC: each client ends either used and kept, or collected with
// MarkClientUsed answering ErrNotFound; never marked used yet gone.
func testConcurrentMarkUsedGC(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 20
	now := base.Add(store.UnusedClientLifetime + time.Hour)
	for i := range n {
		must(t, "CreateClient", s.CreateClient(ctx, store.Client{ID: fmt.Sprintf("race-%d", i), CreatedAt: base}))
	}
	marked := make([]error, n)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := s.GC(ctx, now); err != nil {
			t.Errorf("GC: %v", err)
		}
	})
	for i := range n {
		wg.Go(func() { marked[i] = s.MarkClientUsed(ctx, fmt.Sprintf("race-%d", i), now) })
	}
	wg.Wait()
	for i, err := range marked {
		id := fmt.Sprintf("race-%d", i)
		c, getErr := s.GetClient(ctx, id)
		switch {
		case err == nil && (getErr != nil || c.UsedAt.IsZero()):
			t.Errorf("%s: marked used, then %v (UsedAt %v)", id, getErr, c.UsedAt)
		case err != nil:
			wantErr(t, id+": MarkClientUsed", err, store.ErrNotFound)
			absent(t, id+" after losing to GC", s.GetClient, id)
		}
	}
}
