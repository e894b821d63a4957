package sqlstore

import (
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// A shared cache trusts only a pending row read since the last thing it
// heard, while synced; what it distrusts keeps its pacing.
func TestSharedRowCacheTrust(t *testing.T) {
	pending := store.DeviceCode{Hash: "dc", Status: store.DevicePending, LastPollAt: pacingNow, Interval: 10 * time.Second}
	trusted := func(c *rowCache) bool {
		_, _, ok := c.get("dc")
		return ok
	}
	c := newSharedRowCache()
	c.set(pending, 0, c.generation(), false)
	if trusted(c) {
		t.Error("trusted before ever synced")
	}
	if last, interval, ok := c.pacing("dc"); !ok || !last.Equal(pacingNow) || interval != 10*time.Second {
		t.Errorf("pacing %v %v %v, want it kept while unsynced", last, interval, ok)
	}
	c.resync()
	c.set(pending, 0, c.generation(), false)
	if !trusted(c) {
		t.Fatal("a pending row read while synced is not trusted")
	}

	c.changed("dc")
	if trusted(c) {
		t.Error("trusted after a change to it was heard of")
	}
	if _, interval, ok := c.pacing("dc"); !ok || interval != 10*time.Second {
		t.Error("a change heard of dropped the pacing")
	}

	gen := c.generation() // a read that starts before a loss and ends after it
	c.unsync()
	c.resync()
	c.set(pending, 0, gen, false)
	if trusted(c) {
		t.Error("a row read before a loss was trusted after it")
	}

	c.set(pending, 0, c.generation(), false)
	c.changedAll()
	if trusted(c) {
		t.Error("trusted after every row was said to have changed")
	}
	c.set(pending, 0, c.generation(), false)
	c.unsync()
	if trusted(c) {
		t.Error("trusted while unsynced")
	}
	c.resync()
	if trusted(c) {
		t.Error("a row read before resyncing was trusted after")
	}

	approved := pending
	approved.Status = store.DeviceApproved
	c.set(approved, 1, c.generation(), false)
	if trusted(c) {
		t.Error("an approved row was trusted: a copy may answer pending, slow_down or expired only")
	}
}
