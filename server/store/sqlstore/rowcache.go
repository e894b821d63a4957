package sqlstore

import (
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// rowCache holds device codes as this process last had them, each with its
// version in the table, and the poll pacing this process keeps for them
// (Store.paced). A nil *rowCache holds nothing.
//
// On SQLite (one process) every write to a row passes here, so a row held
// is always current. On PostgreSQL (shared) other instances write too: a
// row is answered from only while their changes are heard of (synced, see
// listen.go) and none was heard of for it since it was read, and only a
// pending one, so a copy can answer pending, slow_down or expired, never
// issue a token. The pacing, this instance's own, is kept either way.
type rowCache struct {
	mu sync.Mutex
	m  map[string]cachedRow
	// shared: other instances write the table; synced: their changes
	// reach this cache (always true when not shared).
	shared, synced bool
	// gen moves on with anything heard that may have changed a row: a row
	// read before cannot be trusted after (see set).
	gen uint64
	// epoch moves on when every row may have changed; a row trusted in an
	// earlier epoch no longer is.
	epoch uint64
}

type cachedRow struct {
	row     store.DeviceCode // at the stored precision
	version int64
	trusted bool
	epoch   uint64
	// wrote is the last poll whose pacing this instance wrote back
	// (shared tables only; see sharedWith).
	wrote time.Time
}

// maxCachedRows bounds a cache; beyond it the rows polled longest ago are
// dropped, which costs a read, and resets their pacing.
const maxCachedRows = 200_000

func newRowCache() *rowCache { return &rowCache{m: map[string]cachedRow{}, synced: true} }

// newSharedRowCache is a rowCache for a table other instances write: it
// trusts no row until resynced.
func newSharedRowCache() *rowCache { return &rowCache{m: map[string]cachedRow{}, shared: true} }

// generation is read before the table is, and passed to set.
func (c *rowCache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// sharedWith reports whether a poll that moved the pacing from cur to next
// writes it for the other instances: on a shared table, at this
// instance's first poll of the code (seen false), and when the interval
// moved (a slow_down) at least an interval (cur's) after this instance last
// wrote it. A client polling far too fast then costs one write, one
// notification to every instance and one read again per interval and
// instance, not one per poll.
func (c *rowCache) sharedWith(seen bool, cur, next store.DeviceCode) bool {
	if c == nil || !c.shared {
		return false
	}
	if !seen {
		return true
	}
	if next.Interval == cur.Interval {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !next.LastPollAt.Before(c.m[next.Hash].wrote.Add(cur.Interval))
}

// get returns the row under hash if it may be answered from, unread.
func (c *rowCache) get(hash string) (store.DeviceCode, int64, bool) {
	if c == nil {
		return store.DeviceCode{}, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || !e.trusted || e.epoch != c.epoch || !c.synced {
		return store.DeviceCode{}, 0, false
	}
	return e.row, e.version, true
}

// pacing returns the last poll and interval kept for hash, trusted or not.
func (c *rowCache) pacing(hash string) (lastPoll time.Time, interval time.Duration, ok bool) {
	if c == nil {
		return time.Time{}, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	return e.row.LastPollAt, e.row.Interval, ok
}

// set keeps d, read (or last trusted) at generation gen, whose pacing this
// instance has just written back if wrote. When shared, it is trusted only
// if nothing was heard since gen and it is pending.
func (c *rowCache) set(d store.DeviceCode, version int64, gen uint64, wrote bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedRows {
		cut := time.Time{}
		for _, e := range c.m { // drop the older half, roughly
			if cut.IsZero() || e.row.LastPollAt.Before(cut) {
				cut = e.row.LastPollAt
			}
		}
		cut = cut.Add(time.Minute)
		for h, e := range c.m {
			if e.row.LastPollAt.Before(cut) {
				delete(c.m, h)
			}
		}
	}
	trusted := !c.shared || c.synced && gen == c.gen && d.Status == store.DevicePending
	d = atStoredPrecision(d)
	e := cachedRow{row: d, version: version, trusted: trusted, epoch: c.epoch, wrote: c.m[d.Hash].wrote}
	if wrote {
		e.wrote = d.LastPollAt
	}
	c.m[d.Hash] = e
}

func (c *rowCache) forget(hash string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, hash)
}

// gc drops the rows of codes expired before now, as GC drops them.
func (c *rowCache) gc(now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.m {
		if e.row.ExpiresAt.Before(now) {
			delete(c.m, h)
		}
	}
}

// changed: an instance changed the row under hash (heard by LISTEN); it is
// read from the table again, with the pacing kept.
func (c *rowCache) changed(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if e, ok := c.m[hash]; ok {
		e.trusted = false
		c.m[hash] = e
	}
}

// changedAll: any row may have changed (rows were deleted).
func (c *rowCache) changedAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.epoch++
}

// unsync stops trusting any row: changes may be missed from now.
func (c *rowCache) unsync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.synced = false
}

// resync trusts rows read from now on: every later change will be heard
// of, while rows read before may predate a change that was missed.
func (c *rowCache) resync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.epoch++
	c.synced = true
}
