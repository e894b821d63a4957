package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/store"
)

// Token lifetimes and limits from the contract (service.md "Limits") and
// decisions.md ("JWTs").
const (
	AccessTokenLifetime = 24 * time.Hour
	AuthCodeLifetime    = 10 * time.Minute
	DeviceCodeLifetime  = 900 * time.Second
	DeviceInterval      = 5 * time.Second
	slowDownStep        = 5 * time.Second // RFC 8628 §3.5
	jwtLeeway           = 30 * time.Second
	minSigningKeyLen    = 32
)

// errInvalidCredential is what every credential failure becomes: the bearer
// check never tells a caller why a token was refused.
var errInvalidCredential = errors.New("invalid credential")

// tokenUseSession marks the JWT of a browser session (the auth_token
// cookie, service.md: "for browser sessions only"). Only such a token opens
// pages: an access token held by an OAuth client, or stolen from one, must
// not read the user's API key from Settings or approve a device code.
const tokenUseSession = "session"

// accessClaims are the claims of every JWT the server issues.
type accessClaims struct {
	jwt.RegisteredClaims
	// Use is tokenUseSession for browser sessions and empty for access
	// tokens, so tokens issued before the claim existed count as access
	// tokens and never as sessions (their users sign in once more).
	Use string `json:"token_use,omitempty"`
	// ClientID names the client the token was issued to (RFC 9068 §2.2), so
	// that revocation (RFC 7009) honours only that client's request.
	ClientID string `json:"client_id,omitempty"`
	// Cnf binds a DPoP token to its key (RFC 9449 §6.1); nil for Bearer.
	Cnf *confirmation `json:"cnf,omitempty"`
}

// jkt is the DPoP key the token is bound to, or "".
func (c *accessClaims) jkt() string {
	if c.Cnf == nil {
		return ""
	}
	return c.Cnf.JKT
}

// isSession reports whether the token is a browser session's.
func (c *accessClaims) isSession() bool { return c.Use == tokenUseSession }

// tokenService issues and verifies the server's HS256 JWTs.
type tokenService struct {
	key      []byte
	issuer   string
	audience string
	clock    clock.Clock
	store    store.Store
	parser   *jwt.Parser
	// verifyKeys, when set, is key then the previous keys (verifyAlso).
	verifyKeys *jwt.VerificationKeySet
}

func newTokenService(key []byte, issuer, audience string, clk clock.Clock, st store.Store) *tokenService {
	return &tokenService{
		key:      key,
		issuer:   issuer,
		audience: audience,
		clock:    clk,
		store:    st,
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), // never "none", never RS/ES confusion
			jwt.WithLeeway(jwtLeeway),
			jwt.WithIssuer(issuer),
			jwt.WithAudience(audience),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithTimeFunc(clk.Now),
		),
	}
}

// issuedToken is a freshly signed access token.
type issuedToken struct {
	Raw       string
	ID        string // jti
	ExpiresAt time.Time
}

// Issue signs an access token for userID valid for 24 hours from now.
func (ts *tokenService) Issue(userID string) (issuedToken, error) {
	return ts.issueNew(userID, "")
}

// IssueSession signs a browser session token for userID (24 hours). It
// also works as a bearer token; access tokens never work as sessions.
func (ts *tokenService) IssueSession(userID string) (issuedToken, error) {
	return ts.issueNew(userID, tokenUseSession)
}

func (ts *tokenService) issueNew(userID, use string) (issuedToken, error) {
	jti, err := randomToken(16)
	if err != nil {
		return issuedToken{}, err
	}
	return ts.issueWithID(userID, jti, use)
}

func (ts *tokenService) issueWithID(userID, jti, use string) (issuedToken, error) {
	return ts.sign(userID, "", jti, use)
}

// issueForClient signs an access token issued to an OAuth client, bound
// to the DPoP key thumbprint jkt unless it is "".
func (ts *tokenService) issueForClient(userID, clientID, jti, jkt string) (issuedToken, error) {
	return ts.signBound(userID, clientID, jti, "", jkt)
}

func (ts *tokenService) sign(userID, clientID, jti, use string) (issuedToken, error) {
	return ts.signBound(userID, clientID, jti, use, "")
}

func (ts *tokenService) signBound(userID, clientID, jti, use, jkt string) (issuedToken, error) {
	now := ts.clock.Now().Truncate(time.Second)
	exp := now.Add(AccessTokenLifetime)
	claims := accessClaims{jwt.RegisteredClaims{
		Subject:   userID,
		Issuer:    ts.issuer,
		Audience:  jwt.ClaimStrings{ts.audience},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
		ID:        jti,
	}, use, clientID, nil}
	if jkt != "" {
		claims.Cnf = &confirmation{JKT: jkt}
	}
	raw, err := signHS256(&claims, ts.key)
	if err != nil {
		return issuedToken{}, fmt.Errorf("signing access token: %w", err)
	}
	return issuedToken{Raw: raw, ID: jti, ExpiresAt: exp}, nil
}

// Verify checks signature, algorithm, issuer, audience, expiry (with at most
// 30 s leeway) and revocation, and returns the claims. Any failure is
// errInvalidCredential; a store failure is returned wrapped so it becomes a
// 500 rather than a silent accept or a misleading 401.
func (ts *tokenService) Verify(ctx context.Context, raw string) (*accessClaims, error) {
	var claims accessClaims
	if _, err := ts.parser.ParseWithClaims(raw, &claims, ts.keyFunc); err != nil {
		return nil, errInvalidCredential
	}
	if claims.Subject == "" || claims.ID == "" {
		return nil, errInvalidCredential
	}
	revoked, err := ts.store.IsTokenRevoked(ctx, claims.ID)
	if err != nil {
		return nil, fmt.Errorf("checking revocation: %w", err)
	}
	if revoked {
		return nil, errInvalidCredential
	}
	return &claims, nil
}

func (ts *tokenService) keyFunc(*jwt.Token) (any, error) {
	if ts.verifyKeys != nil {
		return *ts.verifyKeys, nil
	}
	return ts.key, nil
}

// verifyAlso accepts tokens signed by previous keys (a rotation); new
// tokens are still signed with key only.
func (ts *tokenService) verifyAlso(previous [][]byte) {
	set := jwt.VerificationKeySet{Keys: []jwt.VerificationKey{ts.key}}
	for _, k := range previous {
		set.Keys = append(set.Keys, k)
	}
	ts.verifyKeys = &set
}

// randomToken returns n random bytes, base64url-encoded without padding.
func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
