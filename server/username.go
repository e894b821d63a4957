package server

import (
	"context"
	"sync"
	"time"
)

// nameTTL bounds how stale a display name may be on an instance that did
// not see the user sign in again (names change only at sign-in).
const nameTTL = 5 * time.Minute

// nameCache keeps display names so that a ping costs no store read: the
// name is display only, and a store read per request cost more than the
// rest of the ping path.
type nameCache struct {
	mu sync.Mutex
	m  map[string]cachedName
}

type cachedName struct {
	name    string
	expires time.Time
}

// maxCachedNames bounds the cache; past it, the cache starts over.
const maxCachedNames = 10000

func (c *nameCache) get(userID string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[userID]
	if !ok || now.After(n.expires) {
		return "", false
	}
	return n.name, true
}

func (c *nameCache) put(userID, name string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedNames {
		c.m = map[string]cachedName{}
	}
	c.m[userID] = cachedName{name: name, expires: now.Add(nameTTL)}
}

// userName is the display name the identity provider gave for a user, or ""
// when there is none or the lookup fails: the name is an extension for
// display (GET /api/ping and the whoami tool), never a reason to fail.
func (s *Server) userName(ctx context.Context, userID string) string {
	if userID == "" {
		return ""
	}
	now := s.clock.Now()
	if n, ok := s.names.get(userID, now); ok {
		return n
	}
	u, err := s.store.GetUser(ctx, userID)
	if isNotFound(err) {
		s.names.put(userID, "", now) // no user, no name: not a store read per request either
		return ""
	}
	if err != nil {
		return ""
	}
	s.names.put(userID, u.Name, now)
	return u.Name
}
