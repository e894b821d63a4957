package server

import (
	"sync"
	"time"
)

// maxReplayEntries bounds the replay cache. Only requests that passed every
// other check reach it (a verified client assertion, a DPoP proof with a
// valid token or client), so only authenticated callers can fill it.
const maxReplayEntries = 1 << 17

// replayCache remembers the jti of client assertions and DPoP proofs until
// they expire, so each is accepted once (RFC 7523 §3 item 7, RFC 9449
// §11.1). It is per process: decisions.md "Machine clients" says what that
// means for several instances.
type replayCache struct {
	mu   sync.Mutex
	seen map[string]time.Time // key -> when it may be forgotten
}

func newReplayCache() *replayCache { return &replayCache{seen: map[string]time.Time{}} }

// firstUse records key until until and reports whether it was new. When
// the cache is full of live entries it refuses (fails closed) rather than
// forget one that could then be replayed.
func (c *replayCache) firstUse(key string, until, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if exp, ok := c.seen[key]; ok && now.Before(exp) {
		return false
	}
	if len(c.seen) >= maxReplayEntries {
		for k, exp := range c.seen {
			if !now.Before(exp) {
				delete(c.seen, k)
			}
		}
		if len(c.seen) >= maxReplayEntries {
			return false
		}
	}
	c.seen[key] = until
	return true
}
