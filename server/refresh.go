package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// Refresh tokens look like mcpr_<43 base62 chars>, 32 random bytes, like
// API keys, so secret scanners can tell them apart (decisions.md).
const refreshTokenPrefix = "mcpr_"

// RefreshFamilyLifetime bounds a family from its original grant: rotation
// never extends it, so a stolen family dies within 30 days whatever happens.
const RefreshFamilyLifetime = 30 * 24 * time.Hour

// looksLikeRefreshToken refuses anything malformed before a store lookup.
func looksLikeRefreshToken(s string) bool { return looksLikeBase62Secret(s, refreshTokenPrefix) }

// grantsRefresh: a refresh token goes with the access token when the
// granted scope includes offline_access and the client may use the
// refresh_token grant (decisions.md "Refresh tokens").
func grantsRefresh(c store.Client, scope string) bool {
	return hasScope(scope, scopeOfflineAccess) && containsString(c.GrantTypes, grantRefresh)
}

// effectiveScope is the scope reported with a code or device grant's
// tokens: offline_access only when a refresh token is issued with them.
func effectiveScope(c store.Client, scope string) string {
	if hasScope(scope, scopeOfflineAccess) && !grantsRefresh(c, scope) {
		return scopeMCP
	}
	return scope
}

// startRefreshFamily issues the first refresh token of a new family for the
// access token just issued (tok). The family is named by that token's jti.
func (s *Server) startRefreshFamily(ctx context.Context, clientID, userID, scope, resource string, tok issuedToken) (string, error) {
	raw, err := newBase62Secret(refreshTokenPrefix)
	if err != nil {
		return "", err
	}
	now := s.clock.Now()
	err = s.store.CreateRefreshToken(ctx, store.RefreshToken{
		Hash: hashSecret(raw), FamilyID: tok.ID, ClientID: clientID, UserID: userID, Scope: scope, Resource: resource,
		ExpiresAt: now.Add(RefreshFamilyLifetime), CreatedAt: now, TokenID: tok.ID, TokenExp: tok.ExpiresAt,
	})
	if err != nil {
		return "", fmt.Errorf("storing refresh token: %w", err)
	}
	return raw, nil
}

// replayedMeanwhile closes a race with revokeReplayed: a replay of the code
// between its consumption and the family's creation revoked the access
// token but found no family yet. Whichever came second sees the other's
// write, so the family is revoked either way.
func (s *Server) replayedMeanwhile(ctx context.Context, jti string) (bool, *oauthError) {
	revoked, err := s.store.IsTokenRevoked(ctx, jti)
	if err == nil && revoked {
		err = s.revokeFamily(ctx, jti)
	}
	if err != nil {
		s.log.Error("checking a new refresh token family against a code replay", "request_id", requestID(ctx), "err", err)
		return false, newError(http.StatusInternalServerError, errServerError, "internal error")
	}
	return revoked, nil
}

// cmpErr returns e if it is set, else fallback.
func cmpErr(e, fallback *oauthError) *oauthError {
	if e != nil {
		return e
	}
	return fallback
}

// refreshGrant is grant_type=refresh_token at /oauth/token (RFC 6749 §6):
// the presented token is spent and a new access and refresh token issued;
// a spent one presented again revokes its family (RFC 9700 §4.14.2),
// unless the reuse interval allows it (spentRefresh).
func (s *Server) refreshGrant(w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
	ctx := r.Context()
	for _, k := range []string{"refresh_token", "client_id"} {
		if p[k] == "" {
			writeOAuthError(w, invalidRequest("%s is required", k))
			return
		}
	}
	client, ok := s.knownClient(w, r, p["client_id"])
	if !ok {
		return
	}
	if !looksLikeRefreshToken(p["refresh_token"]) {
		writeOAuthError(w, invalidGrant("unknown refresh token"))
		return
	}
	hash := hashSecret(p["refresh_token"])
	rt, err := s.store.GetRefreshToken(ctx, hash)
	if isNotFound(err) {
		writeOAuthError(w, invalidGrant("unknown refresh token"))
		return
	}
	if err != nil {
		s.serverError(w, r, "looking up refresh token", err)
		return
	}
	now := s.clock.Now()
	scope, refused := s.checkRefresh(client, rt, p)
	ask := refreshAsk{scope: p["scope"], refused: refused}
	switch {
	case rt.ClientID != client.ID:
		writeOAuthError(w, invalidGrant("refresh token was issued to another client"))
		return
	case rt.Revoked:
		writeOAuthError(w, invalidGrant("refresh token revoked"))
		return
	case rt.Used:
		s.spentRefresh(w, r, rt, p["refresh_token"], ask)
		return
	case !now.Before(rt.ExpiresAt):
		writeOAuthError(w, invalidGrant("refresh token expired"))
		return
	case refused != nil:
		writeOAuthError(w, refused)
		return
	}
	s.issue(w, r, g, &issuance{userID: rt.UserID, clientID: client.ID, client: client, scope: scope,
		rotate: rotation{presented: p["refresh_token"], hash: hash, now: now, ask: ask}})
}

// checkRefresh applies the checks of a refresh request beyond its token's
// state: the client may use the grant, the scope does not exceed the
// family's and the resource is this server's. It returns the scope to
// issue, or why the request is refused.
func (s *Server) checkRefresh(client store.Client, rt store.RefreshToken, p map[string]string) (string, *oauthError) {
	if !containsString(client.GrantTypes, grantRefresh) {
		return "", newError(http.StatusBadRequest, errUnauthorizedClient, "the client is not registered for the refresh_token grant")
	}
	scope, oerr := narrowScope(rt.Scope, p["scope"])
	if oerr != nil {
		return "", oerr
	}
	return scope, s.checkResourceParam(p["resource"])
}

// refreshAsk is what a refresh request asks beyond its token, for a reuse
// of a spent one: the scope it names ("" for none) and why checkRefresh
// refused it (nil when it passed).
type refreshAsk struct {
	scope   string
	refused *oauthError
}

// rotation is a refresh token presented for the refresh grant.
type rotation struct {
	presented, hash string
	now             time.Time
	ask             refreshAsk
}

// rotateRefresh gives resp a new refresh token that replaces the presented
// one in its family, for the access token tok signed before: the rotation
// keeps the pair for a reuse, and of concurrent refreshes only the one
// whose rotation wins sends its pair. It reports whether resp may go out;
// if not, it has written the answer.
func (s *Server) rotateRefresh(w http.ResponseWriter, r *http.Request, rot *rotation, resp *tokenResponse, tok issuedToken) bool {
	raw, err := newBase62Secret(refreshTokenPrefix)
	if err != nil {
		s.serverError(w, r, "generating refresh token", err)
		return false
	}
	resp.RefreshToken = raw
	kept, err := s.keepSuccessor(rot.presented, rot.hash, *resp, tok.ExpiresAt)
	if err != nil {
		s.serverError(w, r, "sealing the new pair", err)
		return false
	}
	next := store.RefreshToken{Hash: hashSecret(raw), CreatedAt: rot.now, TokenID: tok.ID, TokenExp: tok.ExpiresAt}
	cur, err := s.store.RotateRefreshToken(r.Context(), rot.hash, next, rot.now, kept)
	switch {
	case errors.Is(err, store.ErrAlreadyUsed) && cur.Revoked:
		writeOAuthError(w, invalidGrant("refresh token revoked"))
	case errors.Is(err, store.ErrAlreadyUsed):
		s.spentRefresh(w, r, cur, rot.presented, rot.ask)
	case isNotFound(err):
		writeOAuthError(w, invalidGrant("unknown refresh token"))
	case err != nil:
		s.serverError(w, r, "rotating refresh token", err)
	}
	return err == nil
}

// narrowScope applies RFC 6749 §6: an omitted scope is the original grant;
// a given one must not exceed it.
func narrowScope(granted, requested string) (string, *oauthError) {
	if requested == "" {
		return granted, nil
	}
	set, oerr := parseScopeSet(requested)
	if oerr != nil {
		return "", oerr
	}
	for tok := range set {
		if !hasScope(granted, tok) {
			return "", newError(http.StatusBadRequest, errInvalidScope, "scope %s was not granted", tok)
		}
	}
	return canonicalScope(set), nil
}

// replayedRefresh answers a spent refresh token: it may have been stolen,
// so the family and every access token issued in it are revoked.
func (s *Server) replayedRefresh(w http.ResponseWriter, r *http.Request, rt store.RefreshToken) {
	if err := s.revokeFamily(r.Context(), rt.FamilyID); err != nil && !isNotFound(err) {
		s.serverError(w, r, "revoking a replayed refresh token's family", err)
		return
	}
	s.metrics.refreshReused()
	s.log.Warn("refresh token replayed: revoked its family", "request_id", requestID(r.Context()), "client_id", rt.ClientID, "user_id", rt.UserID)
	writeOAuthError(w, invalidGrant("refresh token already used; its grant is revoked"))
}

// revokeFamily revokes a refresh token family and its access tokens in the
// store, for every instance, and in this process's credential cache.
func (s *Server) revokeFamily(ctx context.Context, familyID string) error {
	revoked, err := s.store.RevokeRefreshFamily(ctx, familyID)
	if err != nil {
		return err
	}
	if s.cache != nil {
		now := s.clock.Now()
		for _, t := range revoked {
			s.cache.revoke(t.ID, t.ExpiresAt, now)
		}
	}
	return nil
}
