package server

import (
	"sync"
	"time"
)

// credentialCache remembers verified credentials in this process, so a
// bearer check that hits costs neither a JWT parse nor a store read. It is
// only correct when every write that can invalidate an entry reaches it: on
// one instance (SQLite, memory) the process's own writes are all of them;
// on a shared store (PostgreSQL) the other instances' arrive through the
// store's Watcher (see invalidations.go), and the cache is "shared": it
// answers nothing while it may have missed some. Off unless
// Config.CacheCredentials is set (mcpauth serve sets it unless
// --strict-revocation).
//
// The guarantees the contract needs hold on the very next request (on
// another instance, once its notification arrived):
//   - an expired JWT: a hit re-checks exp (with the leeway) on the clock;
//   - a revoked jti (code replay, logout): revocations are recorded before
//     the store is told (here) or as they are heard of (elsewhere), and
//     every hit checks them;
//   - a regenerated API key: the user's entry is dropped, and a generation
//     counter stops a lookup that raced with the change from re-inserting
//     the old key;
//   - notifications missed (shared): nothing is answered from the cache
//     until the listener is back, and then the cache starts empty; the
//     generation stops a lookup that read the database before from filling
//     it.
type credentialCache struct {
	mu      sync.RWMutex
	gen     uint64
	jwts    map[[32]byte]cachedJWT
	keys    map[[32]byte]string // SHA-256 of an api key → user id
	keyOf   map[string][32]byte // user id → SHA-256 of its api key
	revoked map[string]time.Time
	// shared: other instances write too; synced: their changes reach
	// this cache (always true when not shared).
	shared, synced bool
}

type cachedJWT struct {
	sub, jti string
	jkt      string // the DPoP key it is bound to, or ""
	exp      time.Time
}

// maxCached bounds each map; when full it is emptied, which costs only
// misses.
const maxCached = 100_000

func newCredentialCache() *credentialCache {
	return &credentialCache{
		jwts: map[[32]byte]cachedJWT{}, keys: map[[32]byte]string{}, keyOf: map[string][32]byte{},
		revoked: map[string]time.Time{}, synced: true,
	}
}

// newSharedCache is a cache for a store other instances write to: it
// answers nothing until resynced.
func newSharedCache() *credentialCache {
	c := newCredentialCache()
	c.shared, c.synced = true, false
	return c
}

func tokenKey(raw string) [32]byte { return sum256(raw) }

// jwt returns the cached claims of raw if they are still valid at now.
func (c *credentialCache) jwt(k [32]byte, now time.Time) (cachedJWT, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.jwts[k]
	if !ok || !c.synced || !now.Before(e.exp.Add(jwtLeeway)) { // as golang-jwt: valid while now < exp + leeway
		return cachedJWT{}, false
	}
	if _, revoked := c.revoked[e.jti]; revoked {
		return cachedJWT{}, false
	}
	return e, true
}

// putJWT caches a verified token, unless the cache changed since gen.
func (c *credentialCache) putJWT(k [32]byte, e cachedJWT, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.synced {
		return
	}
	if len(c.jwts) >= maxCached {
		clear(c.jwts)
	}
	c.jwts[k] = e
}

// revoke records a revocation made by this process; entries past their
// token's expiry are dropped as the set grows.
func (c *credentialCache) revoke(jti string, exp, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.revoked) >= maxCached {
		for j, e := range c.revoked {
			if now.After(e.Add(jwtLeeway)) {
				delete(c.revoked, j)
			}
		}
	}
	c.revoked[jti] = exp
}

// generation is read before a store lookup and passed to putKey.
func (c *credentialCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *credentialCache) key(hash [32]byte) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	u, ok := c.keys[hash]
	return u, ok && c.synced
}

// putKey caches a key found in the store, unless a key changed since gen.
func (c *credentialCache) putKey(hash [32]byte, userID string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.synced {
		return
	}
	if len(c.keys) >= maxCached {
		clear(c.keys)
		clear(c.keyOf)
	}
	c.keys[hash] = userID
	c.keyOf[userID] = hash
}

// dropUserKey forgets the user's cached key (it was regenerated).
func (c *credentialCache) dropUserKey(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if h, ok := c.keyOf[userID]; ok {
		delete(c.keys, h)
		delete(c.keyOf, userID)
	}
}

// unsync stops answering from the cache: changes may be missed from now.
func (c *credentialCache) unsync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.synced = false
}

// resync starts over, empty, once every later change will be heard of:
// entries cached before may predate a change that was missed.
func (c *credentialCache) resync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.jwts)
	clear(c.keys)
	clear(c.keyOf)
	c.synced = true
}
