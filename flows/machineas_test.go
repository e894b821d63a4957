package flows_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// machineAS is a fake authorization server and resource for the machine
// grants. It verifies everything cryptographically, as a strict server
// would: client secrets, client assertions (signature with the registered
// public key, every RFC 7523 claim, jti never seen before), DPoP proofs
// (signature with the embedded jwk, typ, htm, htu, iat, jti never seen
// before, nonce when it demands one, ath at the resource, the key the token
// is bound to), and JWT bearer assertions signed by a trusted issuer.
type machineAS struct {
	t   *testing.T
	srv *httptest.Server
	now time.Time

	clientID, secret string
	clientKey        crypto.PublicKey // private_key_jwt
	audience         string           // expected assertion aud ("" = the issuer, srv.URL)
	// trusted signs JWT bearer assertions (a workload IdP, or the
	// enterprise IdP's ID-JAGs): issuer -> key.
	trusted map[string]crypto.PublicKey

	mu         sync.Mutex
	jtis       map[string]bool // client assertion and proof jtis seen
	asNonce    string          // demanded at the token endpoint when set
	rsNonce    string          // demanded at the resource when set
	newNonce   bool            // hand out a new nonce on every request (a broken server)
	tokenType  string          // override the issued token_type
	bound      map[string]string
	forms      []url.Values
	authz      []string
	tokenCalls int
	pingCalls  int
	// The user grants (dpopflows_test.go): codes and device codes issued,
	// refresh tokens and the key each is bound to ("" for none).
	requireDPoP bool
	codes       map[string]string // code -> PKCE challenge
	deviceCodes map[string]bool
	refreshJKT  map[string]string
	failures    []string // why requests were refused
}

func newMachineAS(t *testing.T) *machineAS {
	srv, mux := newServer(t)
	a := &machineAS{t: t, srv: srv, now: t0, clientID: "robot", jtis: map[string]bool{}, bound: map[string]string{}, trusted: map[string]crypto.PublicKey{}}
	a.codes, a.deviceCodes, a.refreshJKT = map[string]string{}, map[string]bool{}, map[string]string{}
	mux.HandleFunc("/oauth/token", a.token)
	mux.HandleFunc("/oauth/authorize", a.authorize)
	mux.HandleFunc("/oauth/device", a.deviceAuthorization)
	mux.HandleFunc("/api/ping", a.ping)
	return a
}

func (a *machineAS) tokenURL() string { return a.srv.URL + "/oauth/token" }

func (a *machineAS) disc(dpopAlgs ...string) *flows.Discovery {
	return &flows.Discovery{Resource: a.srv.URL + "/mcp", Issuer: a.srv.URL, Scope: "mcp",
		AuthServer: &flows.AuthServerMetadata{Issuer: a.srv.URL, TokenEndpoint: a.tokenURL(), DPoPSigningAlgValuesSupported: dpopAlgs}}
}

func (a *machineAS) refuse(w http.ResponseWriter, status int, code, why string) {
	a.failures = append(a.failures, code+": "+why)
	oauthErr(w, status, code, why)
}

func (a *machineAS) token(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenCalls++
	if err := r.ParseForm(); err != nil {
		a.refuse(w, 400, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	a.forms = append(a.forms, f)
	a.authz = append(a.authz, r.Header.Get("Authorization"))
	if err := a.authenticate(r, f); err != nil {
		a.refuse(w, 401, "invalid_client", err.Error())
		return
	}
	jkt := ""
	if p := r.Header.Get("DPoP"); p != "" {
		var err error
		if jkt, err = a.checkProof(p, http.MethodPost, a.tokenURL(), "", a.asNonce); err != nil {
			if errors.Is(err, errNeedNonce) {
				a.asNonce = a.nextNonce(a.asNonce)
				w.Header().Set("DPoP-Nonce", a.asNonce)
				a.refuse(w, 400, "use_dpop_nonce", "nonce required")
				return
			}
			a.refuse(w, 400, "invalid_dpop_proof", err.Error())
			return
		}
	}
	if jkt == "" && a.requireDPoP {
		a.refuse(w, 400, "invalid_dpop_proof", "this server binds every token: DPoP proof required")
		return
	}
	refresh := ""
	switch gt := f.Get("grant_type"); gt {
	case oauthwire.GrantTypeClientCredentials:
	case oauthwire.GrantTypeJWTBearer:
		if err := a.checkBearerAssertion(f.Get("assertion")); err != nil {
			a.refuse(w, 400, "invalid_grant", err.Error())
			return
		}
	case "authorization_code", flows.GrantTypeDeviceCode, oauthwire.GrantTypeRefreshToken:
		var err error
		if refresh, err = a.userGrant(f, jkt); err != nil {
			a.refuse(w, 400, "invalid_grant", err.Error())
			return
		}
	default:
		a.refuse(w, 400, "unsupported_grant_type", gt)
		return
	}
	tok := fmt.Sprintf("at-%d", a.tokenCalls)
	tt := "Bearer"
	if jkt != "" {
		tt = "DPoP"
		a.bound[tok] = jkt
	}
	if a.tokenType != "" {
		tt = a.tokenType
	}
	body := map[string]any{"access_token": tok, "token_type": tt, "expires_in": 600, "scope": f.Get("scope")}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	writeJSON(w, 200, body)
}

func (a *machineAS) nextNonce(old string) string {
	if old == "" || a.newNonce {
		return fmt.Sprintf("n-%d-%d", a.tokenCalls, a.pingCalls)
	}
	return old
}

// authenticate checks the client's credentials as the auth method used.
func (a *machineAS) authenticate(r *http.Request, f url.Values) error {
	if u, p, ok := r.BasicAuth(); ok {
		u, _ = url.QueryUnescape(u)
		p, _ = url.QueryUnescape(p)
		if u != a.clientID || p != a.secret || a.secret == "" {
			return errors.New("bad basic credentials")
		}
		return nil
	}
	if f.Has("client_secret") {
		if f.Get("client_id") != a.clientID || f.Get("client_secret") != a.secret || a.secret == "" {
			return errors.New("bad client_secret_post credentials")
		}
		return nil
	}
	if f.Has("client_assertion") {
		if f.Get("client_assertion_type") != flows.ClientAssertionType {
			return errors.New("wrong client_assertion_type")
		}
		return a.checkClientAssertion(f.Get("client_assertion"), f.Get("client_id"))
	}
	if a.secret != "" || a.clientKey != nil {
		return errors.New("no client authentication")
	}
	return nil // a public client (JWT bearer without client auth)
}

// required checks that every name is present in claims: dropping any of
// them must fail the request.
func required(claims jwt.MapClaims, names ...string) error {
	for _, n := range names {
		if _, ok := claims[n]; !ok {
			return fmt.Errorf("claim %s missing", n)
		}
	}
	return nil
}

func (a *machineAS) parser(algs ...string) *jwt.Parser {
	return jwt.NewParser(jwt.WithValidMethods(algs), jwt.WithTimeFunc(func() time.Time { return a.now }), jwt.WithLeeway(5*time.Second))
}

func (a *machineAS) checkClientAssertion(s, clientID string) error {
	claims := jwt.MapClaims{}
	_, err := a.parser(flows.SigningAlgs...).ParseWithClaims(s, claims, func(*jwt.Token) (any, error) { return a.clientKey, nil })
	if err != nil {
		return fmt.Errorf("client assertion: %w", err)
	}
	if err := required(claims, "iss", "sub", "aud", "jti", "exp", "iat"); err != nil {
		return err
	}
	aud := firstOf(a.audience, a.srv.URL)
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	switch {
	case claims["iss"] != a.clientID || claims["sub"] != a.clientID || clientID != "" && clientID != a.clientID:
		return errors.New("client assertion: iss/sub is not the client")
	case claims["aud"] != aud:
		return fmt.Errorf("client assertion: aud %v, want %s", claims["aud"], aud)
	case exp.Sub(iat.Time) > 5*time.Minute:
		return errors.New("client assertion lives too long")
	}
	return a.spend(claims["jti"])
}

func (a *machineAS) spend(jti any) error {
	s, _ := jti.(string)
	if s == "" || a.jtis[s] {
		return fmt.Errorf("jti %q replayed or empty", s)
	}
	a.jtis[s] = true
	return nil
}

var errNeedNonce = errors.New("nonce required")

// checkProof verifies a DPoP proof (RFC 9449 §4.3) and returns the key's
// thumbprint.
func (a *machineAS) checkProof(p, method, htu, token, nonce string) (string, error) {
	var pub *ecdsa.PublicKey
	claims := jwt.MapClaims{}
	tk, err := a.parser("ES256").ParseWithClaims(p, claims, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ is not dpop+jwt")
		}
		var err error
		pub, err = flowstest.JWKPublicKey(t.Header["jwk"])
		return pub, err
	})
	if err != nil {
		return "", fmt.Errorf("DPoP proof: %w", err)
	}
	_ = tk
	if err := required(claims, "jti", "htm", "htu", "iat"); err != nil {
		return "", err
	}
	iat, _ := claims.GetIssuedAt()
	switch {
	case claims["htm"] != method:
		return "", fmt.Errorf("htm %v", claims["htm"])
	case claims["htu"] != htu:
		return "", fmt.Errorf("htu %v, want %s", claims["htu"], htu)
	case iat.Sub(a.now).Abs() > time.Minute:
		return "", errors.New("iat too far from now")
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", errors.New("ath does not match the token")
		}
	}
	if err := a.spend(claims["jti"]); err != nil {
		return "", err
	}
	if nonce != "" && claims["nonce"] != nonce || a.newNonce {
		return "", errNeedNonce
	}
	return flowstest.JWKThumbprint(pub), nil
}

// checkBearerAssertion verifies a JWT bearer grant's assertion (RFC 7523
// §3): signed by a trusted issuer, aud this server, sub and exp present.
func (a *machineAS) checkBearerAssertion(s string) error {
	claims := jwt.MapClaims{}
	_, err := a.parser("RS256", "ES256").ParseWithClaims(s, claims, func(t *jwt.Token) (any, error) {
		iss, _ := t.Claims.GetIssuer()
		if k, ok := a.trusted[iss]; ok {
			return k, nil
		}
		return nil, fmt.Errorf("untrusted issuer %q", iss)
	})
	if err != nil {
		return fmt.Errorf("assertion: %w", err)
	}
	if err := required(claims, "iss", "sub", "aud", "exp"); err != nil {
		return err
	}
	aud, _ := claims.GetAudience()
	if len(aud) != 1 || aud[0] != a.srv.URL {
		return fmt.Errorf("assertion aud %v", aud)
	}
	return nil
}

// ping is a DPoP-aware resource: a bound token needs its key's proof.
func (a *machineAS) ping(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pingCalls++
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	jkt, isBound := a.bound[tok]
	deny := func(why, code string) {
		a.failures = append(a.failures, "ping: "+why)
		w.Header().Set("WWW-Authenticate", `DPoP error="`+code+`", algs="ES256"`)
		w.WriteHeader(http.StatusUnauthorized)
	}
	switch {
	case !strings.HasPrefix(tok, "at-"):
		deny("unknown token", "invalid_token")
		return
	case isBound && !strings.EqualFold(scheme, "DPoP"):
		deny("bound token sent as "+scheme, "invalid_token")
		return
	}
	if isBound {
		got, err := a.checkProof(r.Header.Get("DPoP"), http.MethodGet, a.srv.URL+"/api/ping", tok, a.rsNonce)
		if errors.Is(err, errNeedNonce) {
			a.rsNonce = a.nextNonce(a.rsNonce)
			w.Header().Set("DPoP-Nonce", a.rsNonce)
			deny("nonce required", "use_dpop_nonce")
			return
		}
		if err != nil || got != jkt {
			deny(fmt.Sprintf("proof: %v (key match %v)", err, got == jkt), "invalid_dpop_proof")
			return
		}
	}
	writeJSON(w, 200, map[string]string{"status": "ok", "user_id": "svc-" + a.clientID})
}

func (a *machineAS) snapshot() (forms []url.Values, authz []string, failures []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.forms...), append([]string(nil), a.authz...), append([]string(nil), a.failures...)
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// with runs f under the server's lock: tests change and read its state
// while its handlers run on other goroutines.
func (a *machineAS) with(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
}

func (a *machineAS) calls() (token, ping int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tokenCalls, a.pingCalls
}
