package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// handleRevoke is POST /oauth/revoke (RFC 7009): form-encoded token,
// optional token_type_hint, and the public client's client_id. A refresh
// token revokes its family, an access token its jti. Whatever the token,
// known or not, revoked already or another client's (which is left alone),
// the answer is 200, so the endpoint tells a caller nothing about tokens it
// does not hold (RFC 7009 §2.2). The hint is not needed: the format tells a
// refresh token from a JWT.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, oerr := readClientParams(r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if p["client_id"] == "" {
		writeOAuthError(w, invalidClient("client_id is required (public clients identify themselves by it)"))
		return
	}
	client, ok := s.knownClient(w, r, p["client_id"])
	if !ok {
		return
	}
	if p["token"] == "" {
		writeOAuthError(w, invalidRequest("token is required"))
		return
	}
	var revokedFor string // the user whose token was revoked, for the log
	var err error
	switch raw := p["token"]; {
	case strings.HasPrefix(raw, refreshTokenPrefix):
		revokedFor, err = s.revokeRefreshToken(ctx, client.ID, raw)
	case strings.HasPrefix(raw, apiKeyPrefix):
		// An API key is the user's, not a client's: never revoked here.
	default:
		revokedFor, err = s.revokeAccessToken(ctx, client.ID, raw)
	}
	if err != nil {
		s.serverError(w, r, "revoking a token", err)
		return
	}
	if revokedFor != "" {
		s.log.Info("token revoked", "request_id", requestID(ctx), "client_id", client.ID, "user_id", revokedFor)
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// revokeRefreshToken revokes raw's family if it is clientID's, and returns
// the user it was issued for ("" when nothing was revoked).
func (s *Server) revokeRefreshToken(ctx context.Context, clientID, raw string) (string, error) {
	if !looksLikeRefreshToken(raw) {
		return "", nil
	}
	rt, err := s.store.GetRefreshToken(ctx, hashSecret(raw))
	if isNotFound(err) || err == nil && (rt.ClientID != clientID || rt.Revoked) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking up refresh token: %w", err)
	}
	if err := s.revokeFamily(ctx, rt.FamilyID); err != nil && !isNotFound(err) {
		return "", fmt.Errorf("revoking refresh token family: %w", err)
	}
	return rt.UserID, nil
}

// revokeAccessToken denies raw's jti if raw is a valid access token issued
// to clientID, and returns its user ("" when nothing was revoked).
func (s *Server) revokeAccessToken(ctx context.Context, clientID, raw string) (string, error) {
	claims, err := s.tokens.Verify(ctx, raw)
	if errors.Is(err, errInvalidCredential) || err == nil && claims.ClientID != clientID {
		return "", nil // invalid, expired, revoked already, or not this client's
	}
	if err != nil {
		return "", fmt.Errorf("verifying access token: %w", err)
	}
	if err := s.revoke(ctx, claims.ID, claims.ExpiresAt.Time); err != nil {
		return "", fmt.Errorf("revoking access token: %w", err)
	}
	return claims.Subject, nil
}
