package server

import (
	"testing"
	"time"
)

// A shared cache (other instances write to the store) answers nothing
// until its listener says it hears every change, and nothing again from
// the moment it may have missed one.
func TestSharedCacheAnswersOnlyWhileSynced(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := newSharedCache()
	jwt, key := tokenKey("a.jwt"), tokenKey("mcpa_key")
	c.putJWT(jwt, cachedJWT{sub: "u", jti: "j", exp: now.Add(time.Hour)}, c.generation())
	c.putKey(key, "u", c.generation())
	if _, ok := c.jwt(jwt, now); ok {
		t.Fatal("a JWT was cached before the cache was synced")
	}
	if _, ok := c.key(key); ok {
		t.Fatal("an API key was cached before the cache was synced")
	}

	c.resync()
	c.putJWT(jwt, cachedJWT{sub: "u", jti: "j", exp: now.Add(time.Hour)}, c.generation())
	c.putKey(key, "u", c.generation())
	if _, ok := c.jwt(jwt, now); !ok {
		t.Fatal("a synced cache does not answer a JWT")
	}
	if _, ok := c.key(key); !ok {
		t.Fatal("a synced cache does not answer an API key")
	}

	c.unsync()
	if _, ok := c.jwt(jwt, now); ok {
		t.Fatal("an unsynced cache answered a JWT")
	}
	if _, ok := c.key(key); ok {
		t.Fatal("an unsynced cache answered an API key")
	}
	// What was cached before the loss may predate a missed change: gone.
	c.resync()
	if _, ok := c.jwt(jwt, now); ok {
		t.Fatal("a JWT cached before the loss survived the resync")
	}
	if _, ok := c.key(key); ok {
		t.Fatal("an API key cached before the loss survived the resync")
	}
}

// A lookup that read the store before a loss (so maybe before a change it
// will never hear of) must not fill the cache after the resync.
func TestSharedCacheRefusesLookupsFromBeforeALoss(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := newSharedCache()
	c.resync()
	gen := c.generation() // the lookup starts: reads the store
	c.unsync()            // the listener's connection drops; a revocation is missed
	c.resync()
	c.putJWT(tokenKey("a.jwt"), cachedJWT{sub: "u", jti: "j", exp: now.Add(time.Hour)}, gen)
	c.putKey(tokenKey("mcpa_key"), "u", gen)
	if _, ok := c.jwt(tokenKey("a.jwt"), now); ok {
		t.Fatal("a JWT read before the loss was cached after the resync")
	}
	if _, ok := c.key(tokenKey("mcpa_key")); ok {
		t.Fatal("an API key read before the loss was cached after the resync")
	}
}

// Changes heard from other instances apply as local ones do.
func TestSharedCacheAppliesHeardChanges(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := &Server{cache: newSharedCache(), clock: fixedClock{now}}
	h := &cacheInvalidations{s: s}
	h.Resynced()
	c := s.cache
	c.putJWT(tokenKey("a.jwt"), cachedJWT{sub: "u", jti: "j", exp: now.Add(time.Hour)}, c.generation())
	c.putKey(tokenKey("mcpa_key"), "u", c.generation())
	h.Revoked("j", now.Add(time.Hour))
	h.APIKeyChanged("u")
	if _, ok := c.jwt(tokenKey("a.jwt"), now); ok {
		t.Fatal("a JWT revoked elsewhere is still answered")
	}
	if _, ok := c.key(tokenKey("mcpa_key")); ok {
		t.Fatal("an API key regenerated elsewhere is still answered")
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
