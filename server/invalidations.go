package server

import (
	"context"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// RunInvalidations keeps the credential cache in step with the other
// instances sharing the store, until ctx ends. With a shared store the
// cache answers nothing until this runs, so a server that never calls it
// is correct, only slower. It returns at once when there is nothing to
// watch (no cache, or a store of this process only).
func (s *Server) RunInvalidations(ctx context.Context) {
	if s.cache == nil || s.watcher == nil {
		return
	}
	if err := s.watcher.WatchInvalidations(ctx, &cacheInvalidations{s: s}); err != nil {
		s.log.Error("credential cache: cannot listen for other instances' changes; every credential check reads the database", "err", err)
	}
}

// cacheInvalidations applies what other instances changed to the cache.
type cacheInvalidations struct {
	s        *Server
	started  bool // synced once: a loss is worth a warning from then on
	unsynced bool // logged once per loss
}

func (h *cacheInvalidations) Revoked(jti string, exp time.Time) {
	h.s.cache.revoke(jti, exp, h.s.clock.Now())
}

func (h *cacheInvalidations) APIKeyChanged(userID string) { h.s.cache.dropUserKey(userID) }

func (h *cacheInvalidations) Unsynced(cause error) {
	h.s.cache.unsync()
	if h.started && !h.unsynced && cause != nil {
		h.s.log.Warn("credential cache: not hearing other instances' changes; every credential check reads the database until it is", "cause", cause)
	}
	h.unsynced = true
}

func (h *cacheInvalidations) Resynced() {
	h.s.cache.resync()
	if h.started && h.unsynced {
		h.s.log.Info("credential cache: hearing other instances' changes again; cache emptied")
	}
	h.unsynced, h.started = false, true
}

// sharedWatcher is the store's source of other instances' changes, nil
// when no other instance writes to it.
func sharedWatcher(st store.Store) store.Watcher {
	if sh, ok := st.(store.Shared); ok {
		return sh.Invalidations()
	}
	return nil
}
