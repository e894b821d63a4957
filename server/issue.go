package server

import (
	"net/http"
	"strconv"
	"time"

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
	b = appendMember(b, `{"access_token":`, r.AccessToken)
	b = appendMember(b, `,"token_type":`, r.TokenType)
	b = append(b, `,"expires_in":`...)
	b = strconv.AppendInt(b, r.ExpiresIn, 10)
	b = appendMember(b, `,"scope":`, r.Scope)
	if r.RefreshToken != "" {
		b = appendMember(b, `,"refresh_token":`, r.RefreshToken)
	}
	return append(b, "}\n"...)
}

func newTokenResponse(t issuedToken) tokenResponse {
	return tokenResponse{AccessToken: t.Raw, TokenType: "Bearer", ExpiresIn: int64(AccessTokenLifetime / time.Second), Scope: scopeMCP}
}

// issuance is what a grant's handler decided: whom the token is for, with
// which scope, and where its refresh token comes from.
type issuance struct {
	userID, clientID string
	// client decides whether a refresh token, and so offline_access, goes
	// with the token; the zero client (an unregistered one) gets neither.
	client          store.Client
	scope, resource string
	// jti names the access token; drawn here when empty. The code grant
	// draws it first, to store it with the code it spends.
	jti string
	// rotate, set for the refresh grant, is the token presented: the new
	// pair replaces it in its family rather than starting one. A value, not
	// a pointer, so that it stays on the stack.
	rotate rotation
}

// issue answers a token request that grant g granted, the same way for
// every grant: it signs the access token, sets the scope, starts or rotates
// the refresh family, counts and logs the token (never the token itself)
// and writes the response.
func (s *Server) issue(w http.ResponseWriter, r *http.Request, g *grantType, in *issuance) {
	if oerr := s.markUsed(r.Context(), in.client); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	jti := in.jti
	if jti == "" {
		var err error
		if jti, err = randomToken(16); err != nil {
			s.serverError(w, r, "generating token id", err)
			return
		}
	}
	jkt := dpopKeyOf(r)
	tok, err := s.tokens.issueForClient(in.userID, in.clientID, jti, jkt)
	if err != nil {
		s.serverError(w, r, "issuing access token", err)
		return
	}
	resp := newTokenResponse(tok)
	var ok bool
	switch {
	case jkt != "":
		// Bound to a key: no refresh token, which would not be (decisions.md).
		resp.TokenType, resp.Scope, ok = tokenTypeDPoP, scopeMCP, true
	case in.rotate.presented != "":
		resp.Scope = in.scope
		ok = s.rotateRefresh(w, r, &in.rotate, &resp, tok)
	default:
		resp.Scope = effectiveScope(in.client, in.scope)
		ok = s.startFamilyFor(w, r, g, in, &resp, tok)
	}
	if !ok {
		return
	}
	s.metrics.tokenIssued(g.label)
	s.log.Info("access token issued", "request_id", requestID(r.Context()), "grant", g.label, "user_id", in.userID, "client_id", in.clientID)
	writeTokenResponse(w, resp)
}

// startFamilyFor gives resp the first refresh token of a new family when
// grant g issues them and the client may have one. It reports whether the
// answer may go out; if not, it has written the error.
func (s *Server) startFamilyFor(w http.ResponseWriter, r *http.Request, g *grantType, in *issuance, resp *tokenResponse, tok issuedToken) bool {
	if !g.issuesRefresh || !grantsRefresh(in.client, in.scope) {
		return true
	}
	var err error
	if resp.RefreshToken, err = s.startRefreshFamily(r.Context(), in.clientID, in.userID, in.scope, in.resource, tok); err != nil {
		s.serverError(w, r, "issuing refresh token", err)
		return false
	}
	if g.replayed == "" {
		return true
	}
	if replayed, oerr := s.replayedMeanwhile(r.Context(), tok.ID); oerr != nil || replayed {
		writeOAuthError(w, cmpErr(oerr, invalidGrant("%s", g.replayed)))
		return false
	}
	return true
}

// writeTokenResponse answers 200 with resp.
func writeTokenResponse(w http.ResponseWriter, resp tokenResponse) {
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp.appendJSON(make([]byte, 0, 512)))
}
