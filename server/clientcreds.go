package server

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Client authentication of machine clients (RFC 6749 §2.3, RFC 7523 §2.2).
const (
	clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// maxAssertionLifetime bounds how far in the future a client
	// assertion's exp may be: a captured assertion is soon useless, and the
	// replay cache need not keep its jti long.
	maxAssertionLifetime = 5 * time.Minute
)

// machineAuthMethods are the token endpoint authentication methods of
// machine clients, beside "none" for everyone else.
var machineAuthMethods = []string{"client_secret_basic", "client_secret_post", "private_key_jwt"}

// noSecret is compared against when the client is unknown or holds a key,
// so a wrong id costs the same as a wrong secret.
var noSecret [32]byte

// clientCredentialsGrant is RFC 6749 §4.4 for operator-registered machine
// clients: the token's sub is the client itself, its scope mcp, and it
// comes without a refresh token (the client can run the grant again).
func (s *Server) clientCredentialsGrant(w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
	id, oerr := s.authenticateMachineClient(r, p)
	if oerr != nil {
		if _, _, basic := r.BasicAuth(); basic && oerr.Code == errInvalidClient {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+s.baseURL+`"`) // RFC 6749 §5.2
		}
		writeOAuthError(w, oerr)
		return
	}
	if _, oerr := normalizeScope(p["scope"]); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if oerr := s.checkResourceParam(p["resource"]); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	// The zero client: nothing to mark used, no refresh token, scope mcp.
	s.issue(w, r, g, &issuance{userID: id, clientID: id, scope: scopeMCP, resource: p["resource"]})
}

// authenticateMachineClient returns the id of the machine client that
// authenticated with exactly one method, or invalid_client.
func (s *Server) authenticateMachineClient(r *http.Request, p map[string]string) (string, *oauthError) {
	basicID, basicSecret, basic := r.BasicAuth()
	posted := p["client_secret"] != ""
	asserted := p["client_assertion"] != "" || p["client_assertion_type"] != ""
	methods := 0
	for _, used := range []bool{basic, posted, asserted} {
		if used {
			methods++
		}
	}
	switch {
	case methods > 1:
		return "", invalidRequest("use one client authentication method (RFC 6749 §2.3)")
	case asserted:
		return s.verifyClientAssertion(p)
	case basic:
		// RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
		id, err1 := url.QueryUnescape(basicID)
		secret, err2 := url.QueryUnescape(basicSecret)
		if err1 != nil || err2 != nil || p["client_id"] != basicID && p["client_id"] != id {
			return "", invalidClient("client authentication failed")
		}
		return s.checkMachineSecret(id, secret)
	case posted:
		return s.checkMachineSecret(p["client_id"], p["client_secret"])
	}
	return "", invalidClient("the client credentials grant needs client authentication: %s", strings.Join(machineAuthMethods, ", "))
}

// checkMachineSecret compares the secret's hash in constant time.
func (s *Server) checkMachineSecret(id, secret string) (string, *oauthError) {
	mc, ok := s.machines[id]
	want := noSecret[:]
	if ok && mc.SecretHash != nil {
		want = mc.SecretHash
	}
	sum := sum256(secret)
	if subtle.ConstantTimeCompare(sum[:], want) != 1 || !ok || mc.SecretHash == nil {
		return "", invalidClient("client authentication failed")
	}
	return id, nil
}

// verifyClientAssertion checks a private_key_jwt assertion (RFC 7523 §3):
// signed by the client's registered key with an algorithm of that key,
// iss = sub = the client, aud the issuer alone (rfc7523bis), an exp at
// most maxAssertionLifetime away, and a jti never seen before.
func (s *Server) verifyClientAssertion(p map[string]string) (string, *oauthError) {
	if p["client_assertion_type"] != clientAssertionType {
		return "", invalidRequest("client_assertion_type must be %s", clientAssertionType)
	}
	raw := p["client_assertion"]
	if raw == "" || len(raw) > 8192 {
		return "", invalidRequest("client_assertion is required (at most 8192 bytes)")
	}
	var unverified jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &unverified); err != nil {
		return "", invalidClient("client_assertion is not a JWT")
	}
	id := unverified.Subject
	if p["client_id"] != "" && p["client_id"] != id {
		return "", invalidClient("client_id does not match the assertion's sub")
	}
	mc, ok := s.machines[id]
	if !ok || mc.PublicKey == nil {
		return "", invalidClient("client authentication failed")
	}
	algs, _ := assertionAlgs(mc.PublicKey) // checked when the client was loaded
	now := s.clock.Now()
	parser := jwt.NewParser(jwt.WithValidMethods(algs), jwt.WithLeeway(jwtLeeway), jwt.WithIssuer(id), jwt.WithSubject(id),
		jwt.WithAudience(s.baseURL), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(s.clock.Now))
	var claims jwt.RegisteredClaims
	if _, err := parser.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return mc.PublicKey, nil }); err != nil {
		return "", invalidClient("client assertion refused: %s", s.assertionProblem(err))
	}
	switch {
	case len(claims.Audience) != 1:
		return "", invalidClient("client assertion refused: aud must be the issuer %s alone", s.baseURL)
	case claims.ID == "":
		return "", invalidClient("client assertion refused: jti is required")
	case claims.ExpiresAt.Sub(now) > maxAssertionLifetime+jwtLeeway:
		return "", invalidClient("client assertion refused: exp is more than %v away", maxAssertionLifetime)
	case !s.replays.firstUse("assertion "+id+" "+claims.ID, claims.ExpiresAt.Add(jwtLeeway), now):
		return "", invalidClient("client assertion refused: its jti was used before")
	}
	return id, nil
}

// assertionProblem says which claim failed, never echoing the assertion.
func (s *Server) assertionProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "aud must be the issuer " + s.baseURL
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "exp is missing or past"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued), errors.Is(err, jwt.ErrTokenNotValidYet):
		return "iat or nbf is in the future"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer), errors.Is(err, jwt.ErrTokenInvalidSubject):
		return "iss and sub must be the client_id"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the signature does not verify with the client's registered key"
	}
	return "malformed"
}
