package flowstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// Server is a fake MCP server with its own authorization server on one
// origin, configurable into the shapes the client must cope with: strict
// refresh token rotation with family revocation, scope-demanding resources,
// MCP 2025-03-26 servers without protected resource metadata (or without
// any metadata), and a protected resource that names other authorization
// servers. Every request is recorded, so a test can assert on what a server
// received (and did not).
//
// Endpoints: /.well-known/oauth-protected-resource[/mcp],
// /.well-known/oauth-authorization-server, /oauth/{register,authorize,token,
// revoke} (and /register, /authorize, /token: the 2025-03-26 defaults),
// /api/ping and /mcp. /authorize approves at once and redirects.
type Server struct {
	*httptest.Server
	t *testing.T

	mu sync.Mutex
	// Configuration; set before the client runs (under no lock: tests set
	// it between steps).
	Clock           flows.Clock
	TokenTTL        time.Duration // default 1 h
	ScopesSupported []string      // the AS's scopes_supported; default mcp, offline_access
	PRMScopes       []string      // the PRM's scopes_supported; default mcp
	// Required are scopes /api/ping and /mcp demand with a 403
	// insufficient_scope (and scope="Required joined").
	Required []string
	// Grantable limits what /authorize grants; nil grants what is asked.
	Grantable []string
	// AuthServers overrides the PRM's authorization_servers.
	AuthServers []string
	// PRMResource overrides the PRM's resource (default URL+"/mcp").
	PRMResource string
	// RootPRMOnly serves the PRM only at the root well-known location.
	RootPRMOnly bool
	// Legacy serves no protected resource metadata (MCP 2025-03-26);
	// NoASMetadata serves no authorization server metadata either.
	Legacy, NoASMetadata bool
	// IssuerOverride is the issuer the metadata claims (default URL).
	IssuerOverride string
	// MCPHandler serves authorized /mcp requests (nil: 404, like a server
	// without MCP); the token check is done before.
	MCPHandler http.Handler
	// AuthorizeHandler, when set, serves /oauth/authorize and /authorize
	// instead (a hostile or strict authorization endpoint).
	AuthorizeHandler http.Handler
	// NoPing makes /api/ping a 404 (an MCP server that is not ours).
	NoPing bool
	// DPoP makes the server advertise and require DPoP (dpop.go), and its
	// resource offer a DPoP challenge beside the Bearer one (RFC 9449 §7.1);
	// with ResourceBearerOnly too, a token request without a proof gets a
	// Bearer token, as from an authorization server that merely offers DPoP;
	// DPoPNonce, when set, is demanded in token endpoint proofs.
	DPoP      bool
	DPoPNonce string
	// ResourceBearerOnly makes /api/ping and /mcp take only Bearer tokens,
	// as many MCP servers do, whatever the authorization server binds, and
	// offer no DPoP challenge.
	ResourceBearerOnly bool
	// Confidential makes registration issue client secrets
	// (client_secret_basic), whose refresh tokens are not DPoP-bound.
	Confidential bool
	// ProofsChecked counts the DPoP proofs accepted.
	ProofsChecked int
	// NoRevocation leaves revocation_endpoint out of the metadata.
	NoRevocation bool
	// UnadvertisedRegistration leaves registration_endpoint out of the
	// metadata while /oauth/register still registers (as Hydra does until
	// told otherwise).
	UnadvertisedRegistration bool
	// IDTokenClaims, when set, makes the server speak OpenID Connect
	// (idtoken.go): ID tokens with these claims (sub, name, email, …);
	// ForgeIDToken signs them with a key the server does not publish.
	IDTokenClaims map[string]any
	ForgeIDToken  bool
	// TokenSubject, when set, makes access tokens JWT-shaped (unsigned,
	// for display only) with this sub, as many servers issue them.
	TokenSubject string

	reqs      []Request
	regs      []flows.ClientMetadata
	codes     map[string]grant
	access    map[string]grant
	refresh   map[string]string // refresh token -> family
	spent     map[string]string // spent refresh token -> family
	revoked   map[string]bool   // family -> revoked
	families  map[string]grant
	n         int
	proofJTIs map[string]bool
	idOnce    sync.Once // the ID token keys are made on first use: RSA keys cost
	idKeys    *idKeys
	prefix    string // unique per server, so two servers never issue equal strings
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Form         url.Values // query and form body
	Body         string
}

type grant struct {
	clientID, scope, resource, family string
	expiry                            time.Time
	jkt                               string // the DPoP key the grant is bound to
}

// NewServer starts a Server; it is closed when the test ends.
func NewServer(t *testing.T) *Server {
	s := start(t)
	t.Cleanup(s.Close)
	return s
}

// Start starts a Server outside a test, for an Example: the caller
// closes it.
func Start() *Server { return start(nil) }

func start(t *testing.T) *Server {
	s := &Server{t: t, Clock: flows.RealClock{}, codes: map[string]grant{}, access: map[string]grant{},
		refresh: map[string]string{}, spent: map[string]string{}, revoked: map[string]bool{}, families: map[string]grant{},
		proofJTIs: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	u, _ := url.Parse(s.URL)
	s.prefix = u.Port()
	return s
}

// errorf fails the test the server runs in; outside a test, the answer
// the failure spoiled is all that shows it.
func (s *Server) errorf(format string, args ...any) {
	if s.t != nil {
		s.t.Errorf(format, args...)
	}
}

// Requests returns what the server has received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Registrations returns the registration requests received.
func (s *Server) Registrations() []flows.ClientMetadata {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.regs)
}

// Count returns how many requests hit path with the given grant_type (""
// for any).
func (s *Server) Count(path, grantType string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Path == path && (grantType == "" || r.Form.Get("grant_type") == grantType) {
			n++
		}
	}
	return n
}

// Leaked returns "METHOD PATH: name" for each request that carried one of
// secrets (name -> value; empty values are skipped) in its query, form,
// body or headers: what a server must never have received.
func (s *Server) Leaked(secrets map[string]string) []string {
	var out []string
	for _, r := range s.Requests() {
		seen := r.Body + " " + r.Form.Encode() + " " + fmt.Sprint(r.Header)
		for name, v := range secrets {
			if v != "" && strings.Contains(seen, v) {
				out = append(out, r.Method+" "+r.Path+": "+name)
			}
		}
	}
	return out
}

func (s *Server) issuer() string {
	if s.IssuerOverride != "" {
		return s.IssuerOverride
	}
	return s.URL
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	_ = r.ParseForm()
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Form: r.Form, Body: string(body)})
	s.mu.Unlock()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/.well-known/oauth-protected-resource"):
		if s.Legacy || (s.RootPRMOnly && p != "/.well-known/oauth-protected-resource") {
			http.NotFound(w, r)
			return
		}
		res := s.PRMResource
		if res == "" {
			res = s.URL + "/mcp"
		}
		as := s.AuthServers
		if as == nil {
			as = []string{s.URL}
		}
		scopes := s.PRMScopes
		if scopes == nil {
			scopes = []string{"mcp"}
		}
		writeJSON(w, 200, map[string]any{"resource": res, "authorization_servers": as, "scopes_supported": scopes})
	case p == "/.well-known/oauth-authorization-server":
		if s.NoASMetadata {
			http.NotFound(w, r)
			return
		}
		scopes := s.ScopesSupported
		if scopes == nil {
			scopes = []string{"mcp", flows.ScopeOfflineAccess}
		}
		md := map[string]any{
			"issuer": s.issuer(), "authorization_endpoint": s.URL + "/oauth/authorize", "token_endpoint": s.URL + "/oauth/token",
			"registration_endpoint": s.URL + "/oauth/register", "revocation_endpoint": s.URL + "/oauth/revoke",
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": scopes,
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "response_types_supported": []string{"code"},
		}
		if s.DPoP {
			md["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		if s.UnadvertisedRegistration {
			delete(md, "registration_endpoint")
		}
		if s.NoRevocation {
			delete(md, "revocation_endpoint")
		}
		if s.IDTokenClaims != nil {
			md["jwks_uri"] = s.URL + "/jwks"
			md["scopes_supported"] = append(scopes, "openid")
		}
		writeJSON(w, 200, md)
	case p == "/jwks":
		s.serveJWKS(w)
	case p == "/oauth/register" || p == "/register":
		s.register(w, r, body)
	case (p == "/oauth/authorize" || p == "/authorize") && s.AuthorizeHandler != nil:
		s.AuthorizeHandler.ServeHTTP(w, r)
	case p == "/oauth/authorize" || p == "/authorize":
		s.authorize(w, r)
	case p == "/oauth/token" || p == "/token":
		s.token(w, r)
	case p == "/oauth/revoke":
		s.mu.Lock()
		if fam, ok := s.refresh[r.PostForm.Get("token")]; ok {
			s.revoked[fam] = true
		}
		s.mu.Unlock()
		w.WriteHeader(200)
	case p == "/api/ping":
		if s.NoPing {
			http.NotFound(w, r)
			return
		}
		if s.checkBearer(w, r) {
			writeJSON(w, 200, map[string]string{"status": "ok", "user_id": "u_fake"})
		}
	case p == "/mcp":
		if r.Header.Get("Authorization") == "" {
			hdr := `Bearer resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`
			if s.Legacy {
				hdr = "Bearer"
			}
			w.Header().Set("WWW-Authenticate", hdr)
			s.offerDPoP(w)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if !s.checkBearer(w, r) {
			return
		}
		if s.MCPHandler == nil {
			http.NotFound(w, r)
			return
		}
		s.MCPHandler.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) register(w http.ResponseWriter, r *http.Request, body []byte) {
	var md flows.ClientMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		oauthError(w, 400, "invalid_client_metadata", err.Error())
		return
	}
	s.mu.Lock()
	s.regs = append(s.regs, md)
	s.n++
	id := fmt.Sprintf("client-%s-%d", s.prefix, s.n)
	s.mu.Unlock()
	answer := map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "grant_types": md.GrantTypes,
		"token_endpoint_auth_method": "none", "scope": md.Scope}
	if s.Confidential {
		answer["client_secret"], answer["token_endpoint_auth_method"] = clientSecret(id), "client_secret_basic"
	}
	writeJSON(w, 201, answer)
}

// clientSecret is the secret a Confidential server gives client id.
func clientSecret(id string) string { return "cs-" + id }

// tokenClient is the client a token request names: HTTP Basic, else the
// client_id parameter. Only a Confidential server checks the secret.
func (s *Server) tokenClient(r *http.Request) (string, bool) {
	if id, secret, ok := r.BasicAuth(); ok {
		return id, !s.Confidential || secret == clientSecret(id)
	}
	return r.PostForm.Get("client_id"), !s.Confidential
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("client_id") == "" {
		http.Error(w, "bad request", 400)
		return
	}
	scope := q.Get("scope")
	if s.Grantable != nil {
		var kept []string
		for _, tok := range strings.Fields(scope) {
			if slices.Contains(s.Grantable, tok) {
				kept = append(kept, tok)
			}
		}
		scope = strings.Join(kept, " ")
	}
	s.mu.Lock()
	s.n++
	code := fmt.Sprintf("code-%s-%d", s.prefix, s.n)
	s.codes[code] = grant{clientID: q.Get("client_id"), scope: scope, resource: q.Get("resource")}
	s.mu.Unlock()
	back := url.Values{"code": {code}, "state": {q.Get("state")}}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	jkt := ""
	if s.DPoP && (r.Header.Get("DPoP") != "" || !s.ResourceBearerOnly) {
		var ok bool
		if jkt, ok = s.tokenProof(w, r); !ok {
			return
		}
	}
	client, authenticated := s.tokenClient(r)
	if !authenticated {
		oauthError(w, 401, "invalid_client", "client authentication failed")
		return
	}
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		var ok bool
		g, ok = s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		if !ok || g.clientID != client {
			oauthError(w, 400, "invalid_grant", "unknown code")
			return
		}
		s.n++
		g.family = fmt.Sprintf("fam-%d", s.n)
		g.jkt = jkt
		s.families[g.family] = g
	case "refresh_token":
		rt := f.Get("refresh_token")
		if fam, ok := s.spent[rt]; ok {
			s.revoked[fam] = true // reuse: revoke the family (RFC 9700 §4.14.2)
			oauthError(w, 400, "invalid_grant", "refresh token reused; family revoked")
			return
		}
		fam, ok := s.refresh[rt]
		if !ok || s.revoked[fam] {
			oauthError(w, 400, "invalid_grant", "unknown or revoked refresh token")
			return
		}
		g = s.families[fam]
		if s.Confidential {
			g.jkt = jkt // not bound: client authentication constrains it (RFC 9449 §5)
		} else if g.jkt != jkt {
			oauthError(w, 400, "invalid_grant", "refresh token bound to another DPoP key")
			return
		}
		if g.clientID != client {
			oauthError(w, 400, "invalid_grant", "client mismatch")
			return
		}
		if res := f.Get("resource"); res != "" && res != g.resource {
			oauthError(w, 400, "invalid_target", "refresh token is for another resource")
			return
		}
		delete(s.refresh, rt)
		s.spent[rt] = fam
	default:
		oauthError(w, 400, "unsupported_grant_type", "")
		return
	}
	ttl := s.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	s.n++
	at := fmt.Sprintf("at-%s-%d", s.prefix, s.n)
	if s.TokenSubject != "" {
		claims, _ := json.Marshal(map[string]any{"sub": s.TokenSubject, "jti": at})
		at = "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(claims) + "."
	}
	g.expiry = s.Clock.Now().Add(ttl)
	s.access[at] = g
	tokenType := "Bearer"
	if g.jkt != "" {
		tokenType = "DPoP"
	}
	resp := map[string]any{"access_token": at, "token_type": tokenType, "expires_in": int(ttl / time.Second), "scope": g.scope}
	if s.IDTokenClaims != nil && f.Get("grant_type") == "authorization_code" {
		resp["id_token"] = s.idToken(g.clientID)
	}
	if slices.Contains(strings.Fields(g.scope), flows.ScopeOfflineAccess) {
		rt := fmt.Sprintf("rt-%s-%d", s.prefix, s.n)
		s.refresh[rt] = g.family
		resp["refresh_token"] = rt
	}
	writeJSON(w, 200, resp)
}

// checkBearer answers 401 or 403 and returns false unless the request
// carries a live token with the Required scopes.
func (s *Server) checkBearer(w http.ResponseWriter, r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	s.mu.Lock()
	g, ok := s.access[tok]
	live := ok && s.Clock.Now().Before(g.expiry) && !s.revoked[g.family]
	if live && g.jkt != "" && !s.ResourceBearerOnly { // bound: "DPoP" and a proof from the key, for this request
		jkt, err := s.checkProof(r.Header.Get("DPoP"), r.Method, s.URL+r.URL.Path, tok)
		live = strings.EqualFold(scheme, "DPoP") && err == nil && jkt == g.jkt
	} else if live {
		live = strings.EqualFold(scheme, "Bearer")
	}
	s.mu.Unlock()
	if !live {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		s.offerDPoP(w)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return false
	}
	for _, need := range s.Required {
		if !slices.Contains(strings.Fields(g.scope), need) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(s.Required, " ")))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return false
		}
	}
	return true
}

// offerDPoP adds the DPoP challenge (RFC 9449 §7.1) of a resource that
// takes DPoP-bound tokens: with DPoP set, unless ResourceBearerOnly.
func (s *Server) offerDPoP(w http.ResponseWriter) {
	if s.DPoP && !s.ResourceBearerOnly {
		w.Header().Add("WWW-Authenticate", `DPoP algs="ES256"`)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}
