package server

import (
	"sync"
	"time"
)

// credentialCache remembers verified credentials in this process, so a
// bearer check that hits costs neither a JWT parse nor a store read. It is
// only correct when every write that can invalidate an entry goes through
// this process — one instance on SQLite or memory — so it is off unless
// Config.CacheCredentials is set (mcpauth serve sets it for SQLite, never
// for PostgreSQL, where other instances write too).
//
// The guarantees the contract needs hold on the very next request:
//   - an expired JWT: a hit re-checks exp (with the leeway) on the clock;
//   - a revoked jti (code replay, logout): revocations made here are
//     recorded before the store is told, and every hit checks them;
//   - a regenerated API key: the user's entry is dropped, and a generation
//     counter stops a lookup that raced with the change from re-inserting
//     the old key.
type credentialCache struct {
	mu      sync.RWMutex
	gen     uint64
	jwts    map[[32]byte]cachedJWT
	keys    map[[32]byte]string // SHA-256 of an api key → user id
	keyOf   map[string][32]byte // user id → SHA-256 of its api key
	revoked map[string]time.Time
}

type cachedJWT struct {
	sub, jti string
	exp      time.Time
}

// maxCached bounds each map; when full it is emptied, which costs only
// misses.
const maxCached = 100_000

func newCredentialCache() *credentialCache {
	return &credentialCache{
		jwts: map[[32]byte]cachedJWT{}, keys: map[[32]byte]string{}, keyOf: map[string][32]byte{},
		revoked: map[string]time.Time{},
	}
}

func tokenKey(raw string) [32]byte { return sum256(raw) }

// jwt returns the cached claims of raw if they are still valid at now.
func (c *credentialCache) jwt(k [32]byte, now time.Time) (cachedJWT, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.jwts[k]
	if !ok || !now.Before(e.exp.Add(jwtLeeway)) { // as golang-jwt: valid while now < exp + leeway
		return cachedJWT{}, false
	}
	if _, revoked := c.revoked[e.jti]; revoked {
		return cachedJWT{}, false
	}
	return e, true
}

func (c *credentialCache) putJWT(k [32]byte, e cachedJWT) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
	return u, ok
}

// putKey caches a key found in the store, unless a key changed since gen.
func (c *credentialCache) putKey(hash [32]byte, userID string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
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
