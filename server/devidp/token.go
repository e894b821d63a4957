package devidp

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/pkce"
)

// grant is what an authorization code stands for until it is exchanged.
type grant struct {
	clientID, redirectURI, challenge, nonce string
	sub, name                               string
	expires                                 time.Time
}

// codeStore keeps authorization codes by SHA-256 hash only, so a memory dump
// or a stray log of the map never yields a usable code.
type codeStore struct {
	mu    sync.Mutex
	codes map[[32]byte]grant
}

var errTooManyCodes = errors.New("too many pending authorization codes")

// put stores g under code, first dropping codes that expired by now.
func (s *codeStore) put(code string, g grant, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, old := range s.codes {
		if !now.Before(old.expires) {
			delete(s.codes, h)
		}
	}
	if len(s.codes) >= maxCodes {
		return errTooManyCodes
	}
	s.codes[sha256.Sum256([]byte(code))] = g
	return nil
}

// take removes code and returns its grant if it had not expired by now. Any
// attempt uses the code up, so a failed exchange cannot be retried.
func (s *codeStore) take(code string, now time.Time) (grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.Sum256([]byte(code))
	g, ok := s.codes[h]
	delete(s.codes, h)
	return g, ok && now.Before(g.expires)
}

// idTokenClaims are the claims of the id_token (OIDC Core §2, §5.1).
type idTokenClaims struct {
	jwt.RegisteredClaims
	Nonce             string `json:"nonce,omitempty"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
}

// token is the token endpoint (RFC 6749 §4.1.3, RFC 7636 §4.6, OIDC Core §3.1.3).
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeTokenError(w, http.StatusRequestEntityTooLarge, "invalid_request", "request body too large")
			return
		}
		writeTokenError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	form := r.PostForm // parameters belong in the body, never the query (§3.2)
	for k, vs := range form {
		if len(vs) > 1 {
			writeTokenError(w, http.StatusBadRequest, "invalid_request", k+" is repeated")
			return
		}
	}
	if code, desc := p.authenticateClient(r, form); code != "" {
		if code == "invalid_client" {
			w.Header().Set("WWW-Authenticate", `Basic realm="devidp"`)
			writeTokenError(w, http.StatusUnauthorized, code, desc)
			return
		}
		writeTokenError(w, http.StatusBadRequest, code, desc)
		return
	}
	if gt := form.Get("grant_type"); gt != "authorization_code" {
		if gt == "" {
			writeTokenError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
			return
		}
		writeTokenError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code is supported")
		return
	}
	code, verifier := form.Get("code"), form.Get("code_verifier")
	if code == "" || verifier == "" {
		writeTokenError(w, http.StatusBadRequest, "invalid_request", "code and code_verifier are required")
		return
	}
	now := p.clock.Now()
	g, ok := p.codes.take(code, now)
	switch {
	case !ok:
		writeTokenError(w, http.StatusBadRequest, "invalid_grant", "code is invalid, expired or already used")
		return
	case g.clientID != p.clientID || g.redirectURI != form.Get("redirect_uri"):
		writeTokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
		return
	case !pkce.Verify(verifier, g.challenge):
		writeTokenError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match code_challenge")
		return
	}

	idToken := jwt.NewWithClaims(jwt.SigningMethodES256, idTokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    p.issuer,
			Subject:   g.sub,
			Audience:  jwt.ClaimStrings{p.clientID},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(tokenTTL)),
		},
		Nonce:             g.nonce,
		Name:              g.name,
		PreferredUsername: g.name,
	})
	idToken.Header["kid"] = p.kid
	signed, err := idToken.SignedString(p.key)
	if err != nil {
		p.log.Error("devidp: signing id_token", "err", err)
		writeTokenError(w, http.StatusInternalServerError, "server_error", "")
		return
	}
	// The access token is opaque and accepted nowhere: there is no userinfo
	// endpoint, and the relying party reads the user from the id_token.
	access, err := randomToken()
	if err != nil {
		p.log.Error("devidp: access token", "err", err)
		writeTokenError(w, http.StatusInternalServerError, "server_error", "")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   int(tokenTTL.Seconds()),
		"id_token":     signed,
	})
}

// authenticateClient checks client_secret_basic or client_secret_post (RFC
// 6749 §2.3.1) and returns an error code and description on failure.
func (p *Provider) authenticateClient(r *http.Request, form url.Values) (code, desc string) {
	id, secret, basic := r.BasicAuth()
	if basic {
		if form.Has("client_secret") {
			return "invalid_request", "use one client authentication method, not two"
		}
		// §2.3.1: the id and secret are form-encoded before Basic encoding.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return "invalid_client", "malformed Basic credentials"
		}
		if form.Has("client_id") && form.Get("client_id") != id {
			return "invalid_request", "client_id in the body differs from the Basic credentials"
		}
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if !equalSecret(id, p.clientID) || !equalSecret(secret, p.clientSecret) {
		return "invalid_client", "client authentication failed"
	}
	return "", ""
}

// equalSecret compares in constant time; hashing first hides the length too.
func equalSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// writeTokenError writes an RFC 6749 §5.2 error.
func writeTokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	body := map[string]string{"error": code}
	if desc != "" {
		body["error_description"] = desc
	}
	writeJSON(w, status, body)
}
