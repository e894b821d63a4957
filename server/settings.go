package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// ensureAPIKey returns the user's API key, creating one if they have none.
func (s *Server) ensureAPIKey(ctx context.Context, userID string) (string, error) {
	k, err := s.store.GetAPIKeyByUser(ctx, userID)
	if err == nil {
		key, stale, err := s.sealers.open(k.Sealed, userID)
		if err != nil {
			return "", err
		}
		if stale { // sealed by another instance still on the previous key
			s.reseal(ctx, k, key)
		}
		return key, nil
	}
	if !isNotFound(err) {
		return "", fmt.Errorf("looking up api key: %w", err)
	}
	return s.regenerateAPIKey(ctx, userID)
}

// regenerateAPIKey replaces the user's key; the store guarantees the old
// hash is gone when SetAPIKey returns, so the previous key fails at once.
func (s *Server) regenerateAPIKey(ctx context.Context, userID string) (string, error) {
	key, err := newAPIKey()
	if err != nil {
		return "", err
	}
	sealed, err := s.sealers.seal(key, userID)
	if err != nil {
		return "", err
	}
	err = s.store.SetAPIKey(ctx, store.APIKey{UserID: userID, Hash: hashSecret(key), Sealed: sealed, CreatedAt: s.clock.Now()})
	if s.cache != nil {
		s.cache.dropUserKey(userID) // after the store: a racing lookup sees the new generation
	}
	if err != nil {
		return "", fmt.Errorf("storing api key: %w", err)
	}
	return key, nil
}

func (s *Server) handleSettings(w http.ResponseWriter, r *http.Request) {
	c := s.requireSession(w, r)
	if c == nil {
		return
	}
	key, err := s.ensureAPIKey(r.Context(), c.Subject)
	if errors.Is(err, errKeyUnreadable) {
		// Not a failure of this request: offer a new key instead of a 500.
		s.log.Warn("api key cannot be shown: no configured sealing key opens it", "request_id", requestID(r.Context()), "user_id", c.Subject)
		s.render(w, r, http.StatusOK, pages.Settings, settingsPage{
			pageBase: s.base(c), UserID: c.Subject, KeyUnreadable: true, CSRF: s.csrfToken(c),
		})
		return
	}
	if err != nil {
		s.renderFailure(w, r, "loading api key", err, "Your settings could not be loaded. Try again.")
		return
	}
	s.render(w, r, http.StatusOK, pages.Settings, settingsPage{
		pageBase: s.base(c), UserID: c.Subject, APIKey: key, CSRF: s.csrfToken(c), Resource: s.resource,
		Regenerated: r.URL.Query().Get("regenerated") == "1",
	})
}

func (s *Server) handleSettingsSubmit(w http.ResponseWriter, r *http.Request) {
	c := s.requireSession(w, r)
	if c == nil {
		return
	}
	form, oerr := readFormParams(r)
	if oerr != nil || !s.validCSRF(c, form["csrf_token"]) {
		s.refuseStaleForm(w, r, reloadForm)
		return
	}
	if form["action"] != "regenerate" {
		s.renderError(w, r, http.StatusBadRequest, "Unknown action", "Nothing was changed.", errInvalidRequest)
		return
	}
	if _, err := s.regenerateAPIKey(r.Context(), c.Subject); err != nil {
		s.renderFailure(w, r, "regenerating api key", err, "The key was not changed. Try again.")
		return
	}
	s.log.Info("api key regenerated", "request_id", requestID(r.Context()), "user_id", c.Subject)
	// Post/redirect/get, so a reload does not regenerate again.
	http.Redirect(w, r, "/settings?regenerated=1", http.StatusSeeOther)
}
