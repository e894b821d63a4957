package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// principal is who a request acts for.
type principal struct {
	UserID string
	Via    string // "jwt" or "api_key"
	// jkt is the DPoP key thumbprint the token is bound to, or "".
	jkt string
}

const principalKey ctxKey = 100

func principalFrom(ctx context.Context) (principal, bool) {
	if st := stateFrom(ctx); st != nil && st.authed {
		return st.principal, true
	}
	p, ok := ctx.Value(principalKey).(principal)
	return p, ok
}

// requireBearer authenticates every request to /api/* and /mcp from the
// Authorization header (service.md "Authentication" 1). A failure is a 401
// with an RFC 6750 §3 / RFC 9728 §5.1 challenge; the body never says why.
func (s *Server) requireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, dpop, present := s.credential(r)
		if token == "" {
			s.challenge(w, present, "")
			return
		}
		p, err := s.authenticate(r.Context(), token)
		if err != nil {
			if errors.Is(err, errInvalidCredential) {
				s.challenge(w, true, "")
				return
			}
			s.serverError(w, r, "authenticating bearer token", err)
			return
		}
		if why := s.checkBinding(r, p, token, dpop); why != "" {
			s.challenge(w, true, why)
			return
		}
		if st := stateFrom(r.Context()); st != nil {
			st.principal, st.authed = p, true
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

// credential is bearerToken, and with DPoP on also the token of
// "Authorization: DPoP <token>" (dpop true).
func (s *Server) credential(r *http.Request) (token string, dpop, present bool) {
	if token, present = bearerToken(r); token != "" || !s.cfg.DPoP {
		return token, false, present
	}
	token, present = authToken(r, tokenTypeDPoP)
	return token, token != "", present
}

// checkBinding enforces RFC 9449 §7: a bound token only with the DPoP
// scheme and a valid proof of its key, an unbound one (or an API key) only
// as Bearer. It returns why the request is refused, or "".
func (s *Server) checkBinding(r *http.Request, p principal, token string, dpop bool) string {
	switch {
	case p.jkt == "" && !dpop:
		return ""
	case p.jkt == "":
		return "the token is not DPoP-bound; send it as Bearer"
	case !dpop || !s.cfg.DPoP:
		return "the token is DPoP-bound; send it with the DPoP scheme and a proof"
	}
	jkt, err := s.verifyDPoPProof(r, s.baseURL+r.URL.Path, token)
	switch {
	case err != nil:
		return err.Error()
	case jkt != p.jkt:
		return "the proof is signed by another key than the token's"
	}
	return ""
}

// bearerToken extracts the credential of "Authorization: Bearer <token>".
// present reports whether any Authorization header was sent, so a malformed
// one is answered as an invalid token rather than a missing one.
func bearerToken(r *http.Request) (token string, present bool) {
	return authToken(r, "Bearer")
}

// authToken extracts the credential of "Authorization: <scheme> <token>".
func authToken(r *http.Request, want string) (token string, present bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false
	}
	if len(vals) > 1 {
		return "", true
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, want) {
		return "", true
	}
	tok = strings.TrimSpace(tok)
	if tok == "" || strings.ContainsAny(tok, " \t") || len(tok) > 4096 {
		return "", true
	}
	return tok, true
}

// authenticate accepts an API key or a JWT issued by this server.
func (s *Server) authenticate(ctx context.Context, token string) (principal, error) {
	if strings.HasPrefix(token, apiKeyPrefix) {
		if !looksLikeAPIKey(token) {
			return principal{}, errInvalidCredential
		}
		sum := sum256(token)
		var gen uint64
		if s.cache != nil {
			if userID, ok := s.cache.key(sum); ok {
				return principal{UserID: userID, Via: "api_key"}, nil
			}
			gen = s.cache.generation()
		}
		k, err := s.store.GetAPIKeyByHash(ctx, hex.EncodeToString(sum[:])) // as hashSecret
		if isNotFound(err) {
			return principal{}, errInvalidCredential
		}
		if err != nil {
			return principal{}, fmt.Errorf("looking up api key: %w", err)
		}
		if s.cache != nil {
			s.cache.putKey(sum, k.UserID, gen)
		}
		return principal{UserID: k.UserID, Via: "api_key"}, nil
	}
	if s.cache == nil {
		claims, err := s.tokens.Verify(ctx, token)
		if err != nil {
			return principal{}, err
		}
		return principal{UserID: claims.Subject, Via: "jwt", jkt: claims.jkt()}, nil
	}
	k := tokenKey(token)
	if e, ok := s.cache.jwt(k, s.clock.Now()); ok {
		return principal{UserID: e.sub, Via: "jwt", jkt: e.jkt}, nil
	}
	gen := s.cache.generation() // before the revocation check: see putJWT
	claims, err := s.tokens.Verify(ctx, token)
	if err != nil {
		return principal{}, err
	}
	s.cache.putJWT(k, cachedJWT{sub: claims.Subject, jti: claims.ID, jkt: claims.jkt(), exp: claims.ExpiresAt.Time}, gen)
	return principal{UserID: claims.Subject, Via: "jwt", jkt: claims.jkt()}, nil
}

// revoke denies a JWT by its jti: in this process's cache first, so no
// request can slip through between the two, then in the store for every
// instance.
func (s *Server) revoke(ctx context.Context, jti string, exp time.Time) error {
	// Unrevoked tokens are honoured until exp + leeway, so the record must
	// live as long, or garbage collection would bring the token back.
	until := exp.Add(jwtLeeway)
	if s.cache != nil {
		s.cache.revoke(jti, until, s.clock.Now())
	}
	return s.store.RevokeToken(ctx, jti, until)
}

// challenge answers 401 with the RFC 6750 §3 / RFC 9728 §5.1 challenge,
// and with DPoP on a DPoP one beside it (RFC 9449 §7.1). dpopProblem,
// when set, is why a DPoP binding or proof was refused: the DPoP challenge
// then carries the error.
func (s *Server) challenge(w http.ResponseWriter, credentialPresented bool, dpopProblem string) {
	v := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource", scope="mcp"`, s.baseURL)
	desc := "a bearer token is required"
	if credentialPresented {
		v += `, error="invalid_token", error_description="the access token is invalid or expired"`
		desc = "the access token is invalid or expired"
	}
	w.Header().Set("WWW-Authenticate", v)
	code := errInvalidToken
	if s.cfg.DPoP {
		d := `DPoP algs="` + dpopAlg + `"`
		if dpopProblem != "" {
			code, desc = errInvalidDPoPProof, errorText(dpopProblem)
			d += `, error="` + code + `", error_description="` + desc + `"`
		}
		w.Header().Add("WWW-Authenticate", d)
	} else if dpopProblem != "" {
		desc = errorText(dpopProblem)
	}
	writeOAuthError(w, newError(http.StatusUnauthorized, code, "%s", desc))
}

type pingResponse struct {
	Status string `json:"status"`
	UserID string `json:"user_id"`
	// Name is an extension to the contract's {status, user_id}: the
	// display name, when the identity provider gave one.
	Name string `json:"name,omitempty"`
}

func (s *Server) handlePing(w http.ResponseWriter, r *http.Request) {
	p, _ := principalFrom(r.Context())
	name := s.userName(r.Context(), p.UserID)
	setJSONHeaders(w.Header())
	body := pingResponse{Status: "ok", UserID: p.UserID, Name: name}
	_, _ = w.Write(body.appendJSON(make([]byte, 0, 96)))
}

// appendJSON appends r as encoding/json's Encoder writes it, without the
// reflection: ping is the hot path of every bearer check.
func (r *pingResponse) appendJSON(b []byte) []byte {
	b = appendMember(b, `{"status":`, r.Status)
	b = appendMember(b, `,"user_id":`, r.UserID)
	if r.Name != "" {
		b = appendMember(b, `,"name":`, r.Name)
	}
	return append(b, "}\n"...)
}
