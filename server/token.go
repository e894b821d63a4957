package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/store"
)

// tokenResponse is RFC 6749 §5.1 with the contract's fields.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// appendJSON appends r as encoding/json's Encoder writes it (newline
// included), without its reflection: every grant answers with one.
func (r *tokenResponse) appendJSON(b []byte) []byte {
	b = append(b, `{"access_token":`...)
	b = appendJSONString(b, r.AccessToken)
	b = append(b, `,"token_type":`...)
	b = appendJSONString(b, r.TokenType)
	b = append(b, `,"expires_in":`...)
	b = strconv.AppendInt(b, r.ExpiresIn, 10)
	b = append(b, `,"scope":`...)
	b = appendJSONString(b, r.Scope)
	if r.RefreshToken != "" {
		b = append(b, `,"refresh_token":`...)
		b = appendJSONString(b, r.RefreshToken)
	}
	return append(b, "}\n"...)
}

func newTokenResponse(t issuedToken) tokenResponse {
	return tokenResponse{AccessToken: t.Raw, TokenType: "Bearer", ExpiresIn: int64(AccessTokenLifetime / time.Second), Scope: scopeMCP}
}

// handleToken is POST /oauth/token: form-encoded, authorization_code, the
// device grant (RFC 8628 §3.4, decisions.md) or refresh_token.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	p, oerr := readParams(r, false)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if id, _, ok := r.BasicAuth(); ok && p["client_id"] == "" {
		p["client_id"] = id // RFC 6749 §2.3.1; our clients are public, the secret is ignored
	}
	switch p["grant_type"] {
	case grantAuthCode:
		s.exchangeCode(w, r, p)
	case grantDeviceCode:
		s.pollDeviceToken(w, r, p)
	case grantRefresh:
		s.refreshGrant(w, r, p)
	case "":
		writeOAuthError(w, invalidRequest("grant_type is required"))
	default:
		writeOAuthError(w, newError(http.StatusBadRequest, errUnsupportedGrantType, "supported grant types: %s, %s, %s", grantAuthCode, grantDeviceCode, grantRefresh))
	}
}

// exchangeCode redeems an authorization code (RFC 6749 §4.1.3, RFC 7636 §4.6).
func (s *Server) exchangeCode(w http.ResponseWriter, r *http.Request, p map[string]string) {
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
		writeOAuthError(w, invalidGrant("authorization code already used"))
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
	tok, err := s.tokens.issueForClient(code.UserID, code.ClientID, jti)
	if err != nil {
		s.serverError(w, r, "issuing access token", err)
		return
	}
	resp := newTokenResponse(tok)
	resp.Scope = effectiveScope(client, code.Scope)
	if grantsRefresh(client, code.Scope) {
		if resp.RefreshToken, err = s.startRefreshFamily(ctx, code.ClientID, code.UserID, code.Scope, code.Resource, tok); err != nil {
			s.serverError(w, r, "issuing refresh token", err)
			return
		}
		if replayed, oerr := s.replayedMeanwhile(ctx, tok.ID); oerr != nil || replayed {
			writeOAuthError(w, cmpErr(oerr, invalidGrant("authorization code already used")))
			return
		}
	}
	s.issued(w, r, metricGrantCode, code.UserID, code.ClientID, resp)
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

// issued answers a grant with resp, counting and logging the token (never
// the token itself) the same way for every grant.
func (s *Server) issued(w http.ResponseWriter, r *http.Request, grant, userID, clientID string, resp tokenResponse) {
	s.metrics.tokenIssued(grant)
	s.log.Info("access token issued", "request_id", requestID(r.Context()), "grant", grant, "user_id", userID, "client_id", clientID)
	writeTokenResponse(w, resp)
}

// writeTokenResponse answers 200 with resp.
func writeTokenResponse(w http.ResponseWriter, resp tokenResponse) {
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp.appendJSON(make([]byte, 0, 512)))
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
