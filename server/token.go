package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/store"
)

// handleToken is POST /oauth/token, form-encoded: each grant of the
// registry (grants.go) at its handler, the device grant included (RFC 8628
// §3.4, decisions.md).
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	p, oerr := readClientParams(r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	name := p["grant_type"]
	if name == "" {
		writeOAuthError(w, invalidRequest("grant_type is required"))
		return
	}
	g := s.grants.lookup(name)
	if g == nil {
		writeOAuthError(w, newError(http.StatusBadRequest, errUnsupportedGrantType, "supported grant types: %s", strings.Join(s.grants.names(), ", ")))
		return
	}
	r, ok := s.tokenDPoPProof(w, r, g)
	if !ok {
		return
	}
	g.handle(s, w, r, p, g)
}

// exchangeCode redeems an authorization code (RFC 6749 §4.1.3, RFC 7636 §4.6).
func (s *Server) exchangeCode(w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
	ctx := r.Context()
	for _, k := range []string{"code", "redirect_uri", "client_id", "code_verifier"} {
		if p[k] == "" {
			writeOAuthError(w, invalidRequest("%s is required", k))
			return
		}
	}
	if !pkce.ValidVerifier(p["code_verifier"]) {
		writeOAuthError(w, invalidRequest("code_verifier must be 43-128 characters of [A-Za-z0-9-._~]"))
		return
	}
	client, ok := s.knownClient(w, r, p["client_id"])
	if !ok {
		return
	}
	jti, err := randomToken(16)
	if err != nil {
		s.serverError(w, r, "generating token id", err)
		return
	}
	now := s.clock.Now()
	hash := hashSecret(p["code"])
	resourceErr := s.checkResourceParam(p["resource"])
	var code store.AuthCode
	if resourceErr == nil {
		// Checked and spent in one step: of concurrent redemptions exactly
		// one gets past here, and one that does not match spends nothing.
		code, err = s.store.ConsumeAuthCode(ctx, hash, store.Redemption{
			ClientID: p["client_id"], RedirectURI: p["redirect_uri"], CodeChallenge: pkce.S256(p["code_verifier"]),
			Now: now, TokenID: jti, TokenExp: now.Truncate(time.Second).Add(AccessTokenLifetime),
		})
	} else if code, err = s.store.GetAuthCode(ctx, hash); err == nil && code.Used {
		err = store.ErrAlreadyUsed // nothing to spend; which error comes first is decided below
	}
	switch {
	case isNotFound(err):
		writeOAuthError(w, invalidGrant("unknown authorization code"))
		return
	case errors.Is(err, store.ErrAlreadyUsed):
		s.revokeReplayed(r, code)
		writeOAuthError(w, invalidGrant("%s", g.replayed))
		return
	case err != nil && !errors.Is(err, store.ErrCodeMismatch):
		s.serverError(w, r, "consuming authorization code", err)
		return
	case err != nil || resourceErr != nil:
		oerr := codeMismatch(code, p, now)
		if oerr == nil {
			oerr = cmpErr(resourceErr, invalidGrant("authorization code does not match this request"))
		}
		writeOAuthError(w, oerr)
		return
	}
	s.issue(w, r, g, &issuance{userID: code.UserID, clientID: code.ClientID, client: client,
		scope: code.Scope, resource: code.Resource, jti: jti})
}

// codeMismatch says why the request p may not redeem code at now, in the
// order of RFC 6749 §4.1.3 and RFC 7636 §4.6, or nil if it may.
func codeMismatch(code store.AuthCode, p map[string]string, now time.Time) *oauthError {
	switch {
	case code.ClientID != p["client_id"]:
		return invalidGrant("authorization code was issued to another client")
	case code.RedirectURI != p["redirect_uri"]:
		return invalidGrant("redirect_uri does not match the authorization request")
	case !now.Before(code.ExpiresAt):
		return invalidGrant("authorization code expired")
	case !pkce.Verify(p["code_verifier"], code.CodeChallenge):
		return invalidGrant("code_verifier does not match the code_challenge")
	}
	return nil
}

// revokeReplayed denies the token issued from a code presented twice
// (RFC 6749 §4.1.2): the code may have been stolen.
func (s *Server) revokeReplayed(r *http.Request, code store.AuthCode) {
	if code.TokenID == "" {
		return
	}
	if err := s.revoke(r.Context(), code.TokenID, code.TokenExp); err != nil {
		s.logError(r, "revoking token of a replayed code", err)
		return
	}
	// The refresh token family started with that token, if any.
	if err := s.revokeFamily(r.Context(), code.TokenID); err != nil && !isNotFound(err) {
		s.logError(r, "revoking refresh tokens of a replayed code", err)
		return
	}
	s.log.Warn("authorization code replayed: revoked the token issued from it", "request_id", requestID(r.Context()), "client_id", code.ClientID, "user_id", code.UserID)
}
