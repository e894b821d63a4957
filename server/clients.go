package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpauth/mcpauth/server/store"
)

// clientCache keeps registered clients that have been used for a login in
// memory. Those are never changed or deleted, so a cached one can never be
// stale, on any number of instances. Unknown ids are not cached (a
// registration may add them), nor clients never used: another instance
// may mark them used, and GC removes those it does not.
type clientCache struct {
	mu sync.RWMutex
	m  map[string]store.Client
}

// knownClient is client for the token endpoints: an unknown id is answered
// 401 invalid_client, a metadata document not fetched for a limit 429 or
// 503, a store failure 500; ok is false when w was answered.
func (s *Server) knownClient(w http.ResponseWriter, r *http.Request, id string) (c store.Client, ok bool) {
	c, err := s.client(r.Context(), id)
	var ue *cimdUnavailableError
	switch {
	case isNotFound(err):
		writeOAuthError(w, invalidClient("unknown client"))
		return c, false
	case errors.As(err, &ue):
		writeOAuthError(w, ue.oauthError())
		return c, false
	case err != nil:
		s.serverError(w, r, "looking up client", err)
		return c, false
	}
	return c, true
}

// client returns the registered client, from memory when it has been seen,
// or the client a metadata document URL describes (never kept here: its
// document may change; the store caches it).
func (s *Server) client(ctx context.Context, id string) (store.Client, error) {
	if isMetadataDocumentID(id) {
		return s.metadataClient(ctx, id)
	}
	s.clients.mu.RLock()
	c, ok := s.clients.m[id]
	s.clients.mu.RUnlock()
	if ok {
		return c, nil
	}
	c, err := s.store.GetClient(ctx, id)
	if err != nil {
		return c, err
	}
	if c.UsedAt.IsZero() {
		// Gone on the server's clock, whenever GC runs.
		if c.CreatedAt.Add(store.UnusedClientLifetime).Before(s.clock.Now()) {
			return store.Client{}, fmt.Errorf("client %q was never used and has expired: %w", truncate(id, 100), store.ErrNotFound)
		}
		return c, nil
	}
	s.cacheClient(c)
	return c, nil
}

func (s *Server) cacheClient(c store.Client) {
	s.clients.mu.Lock()
	defer s.clients.mu.Unlock()
	if len(s.clients.m) >= maxCached {
		clear(s.clients.m)
	}
	s.clients.m[c.ID] = c
}

// markUsed records a registered client's first login, which keeps it past
// store.UnusedClientLifetime. Unregistered device clients (the zero
// client) and metadata document clients have no registration to keep.
func (s *Server) markUsed(ctx context.Context, c store.Client) *oauthError {
	if c.ID == "" || !c.UsedAt.IsZero() || isMetadataDocumentID(c.ID) {
		return nil
	}
	c.UsedAt = s.clock.Now()
	err := s.store.MarkClientUsed(ctx, c.ID, c.UsedAt)
	switch {
	case isNotFound(err): // collected since it was looked up
		return invalidClient("unknown client")
	case err != nil:
		s.log.Error("marking a client used", "request_id", requestID(ctx), "err", err)
		return newError(http.StatusInternalServerError, errServerError, "internal error")
	}
	s.cacheClient(c)
	return nil
}
