package server

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/mcpauth/mcpauth/server/store"
)

// clientCache keeps registered clients in memory. Registrations are never
// changed or deleted, so a cached client can never be stale, on any number
// of instances; unknown ids are not cached (a registration may add them).
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
	s.clients.mu.Lock()
	if len(s.clients.m) >= maxCached {
		clear(s.clients.m)
	}
	s.clients.m[id] = c
	s.clients.mu.Unlock()
	return c, nil
}
