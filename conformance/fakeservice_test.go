package conformance

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/pkce"
)

// fakeService is a small in-memory implementation of the contract, written
// for these tests only. It is a fake because the real part cannot be used
// here: the reference server (server/) must not be imported by this package
// and is being written at the same time. It plays a correct server; each
// fault switches on one misbehaviour, so the tests can prove that the
// matching check fails. Its clock is fake and moves only through /_clock,
// which serves the same protocol as `mcpauth serve --test-clock`.
type fakeService struct {
	srv    *httptest.Server
	base   string
	faults map[string]bool
	key    []byte

	mu          sync.Mutex
	now         time.Time
	offset      time.Duration
	clients     map[string]*fakeClient
	codes       map[string]*fakeCode
	devices     map[string]*fakeDevice
	userCodes   map[string]string // normalised user code → device code
	revoked     map[string]bool   // jti
	loginStates map[string]string // state → return_to
	idpCodes    map[string]string // provider code → user name
	apiKey      string
	oldKeys     []string // still accepted: only with the old-key-valid fault
	seq         int
}

type fakeClient struct {
	id, name     string
	redirectURIs []string
	grantTypes   []string
}

type fakeCode struct {
	clientID, redirectURI, challenge, sub string
	issued                                time.Time
	used                                  bool
	jtis                                  []string
}

type fakeDevice struct {
	clientID, userCode string
	issued, lastPoll   time.Time
	interval           time.Duration
	state              string // pending, approved, denied, spent
	sub                string
}

const fakeUser = "conformance"

func newFakeService(t *testing.T, faults ...string) *fakeService {
	t.Helper()
	s := &fakeService{
		faults: map[string]bool{}, key: []byte("0123456789abcdef0123456789abcdef"),
		now:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		clients: map[string]*fakeClient{}, codes: map[string]*fakeCode{}, devices: map[string]*fakeDevice{},
		userCodes: map[string]string{}, revoked: map[string]bool{}, loginStates: map[string]string{}, idpCodes: map[string]string{},
		apiKey: "mcpa_" + strings.Repeat("Ab3", 14) + "x",
	}
	for _, f := range faults {
		s.faults[f] = true
	}
	s.srv = httptest.NewServer(s.routes())
	s.base = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeService) routes() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.prm)
	m.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.prm)
	m.HandleFunc("GET /.well-known/oauth-authorization-server", s.asMeta)
	m.HandleFunc("POST /oauth/register", s.register)
	m.HandleFunc("GET /oauth/authorize", s.authorize)
	m.HandleFunc("POST /oauth/authorize", s.consent)
	m.HandleFunc("POST /oauth/token", s.token)
	m.HandleFunc("POST /api/oauth/device/code", s.deviceCode)
	m.HandleFunc("POST /api/oauth/device/token", s.deviceToken)
	m.HandleFunc("GET /api/ping", s.ping)
	m.HandleFunc("POST /mcp", s.mcp)
	m.HandleFunc("GET /auth/login", s.login)
	m.HandleFunc("GET /idp/authorize", s.idpPage)
	m.HandleFunc("POST /idp/authorize", s.idpSubmit)
	m.HandleFunc("GET /auth/callback", s.callback)
	m.HandleFunc("GET /auth/device", s.devicePage)
	m.HandleFunc("POST /auth/device", s.deviceSubmit)
	m.HandleFunc("GET /settings", s.settings)
	m.HandleFunc("POST /settings", s.regenerate)
	m.HandleFunc("/_clock", s.clock)
	return m
}

func (s *fakeService) rand() string {
	s.seq++
	return fmt.Sprintf("r%d%s", s.seq, randomString(9))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *fakeService) oauthErr(w http.ResponseWriter, status int, code string) {
	if !s.faults["token-error-cache"] {
		w.Header().Set("Cache-Control", "no-store")
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": code})
}

func (s *fakeService) prm(w http.ResponseWriter, r *http.Request) {
	doc := map[string]any{"resource": s.base + "/mcp", "authorization_servers": []string{s.base}, "scopes_supported": []string{"mcp"}}
	if s.faults["prm-no-scopes"] {
		delete(doc, "scopes_supported")
	}
	writeJSON(w, 200, doc)
}

func (s *fakeService) asMeta(w http.ResponseWriter, r *http.Request) {
	issuer := s.base
	if s.faults["issuer-slash"] {
		issuer += "/"
	}
	writeJSON(w, 200, map[string]any{
		"issuer": issuer, "authorization_endpoint": s.base + "/oauth/authorize", "token_endpoint": s.base + "/oauth/token",
		"registration_endpoint": s.base + "/oauth/register", "device_authorization_endpoint": s.base + "/api/oauth/device/code",
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", flows.GrantTypeDeviceCode},
		"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"mcp"},
	})
}

func validRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(raw, "#") {
		return false
	}
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		h := u.Hostname()
		return h == "localhost" || net.ParseIP(h).IsLoopback()
	}
	return strings.Contains(u.Scheme, ".")
}

func (s *fakeService) register(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		s.oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		s.oauthErr(w, 413, "invalid_client_metadata")
		return
	}
	var req struct {
		ClientName   any      `json:"client_name"`
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
		Scope        *string  `json:"scope"`
	}
	if json.Unmarshal(body, &req) != nil {
		s.oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	name, ok := req.ClientName.(string)
	if req.ClientName != nil && !ok {
		s.oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	if len(req.GrantTypes) == 0 {
		req.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != flows.GrantTypeDeviceCode {
			s.oauthErr(w, 400, "invalid_client_metadata")
			return
		}
	}
	if req.Scope != nil && *req.Scope != "mcp" {
		s.oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	deviceOnly := len(req.GrantTypes) == 1 && req.GrantTypes[0] == flows.GrantTypeDeviceCode
	if len(req.RedirectURIs) == 0 && !deviceOnly {
		s.oauthErr(w, 400, "invalid_redirect_uri")
		return
	}
	for _, u := range req.RedirectURIs {
		if !validRedirect(u) {
			s.oauthErr(w, 400, "invalid_redirect_uri")
			return
		}
	}
	s.mu.Lock()
	c := &fakeClient{id: "c-" + s.rand(), name: name, redirectURIs: req.RedirectURIs, grantTypes: req.GrantTypes}
	s.clients[c.id] = c
	now := s.now
	s.mu.Unlock()
	writeJSON(w, 201, map[string]any{
		"client_id": c.id, "client_name": name, "redirect_uris": c.redirectURIs, "grant_types": c.grantTypes,
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none", "client_id_issued_at": now.Unix(),
	})
}

// matchRedirect: exact, except the port of loopback IP redirect URIs.
func (s *fakeService) matchRedirect(c *fakeClient, got string) bool {
	for _, reg := range c.redirectURIs {
		if got == reg || (s.faults["authorize-redirect-prefix"] && strings.HasPrefix(got, reg)) {
			return true
		}
		a, err1 := url.Parse(reg)
		b, err2 := url.Parse(got)
		if err1 == nil && err2 == nil && a.Scheme == "http" && b.Scheme == "http" && net.ParseIP(a.Hostname()).IsLoopback() &&
			a.Hostname() == b.Hostname() && a.Path == b.Path && a.RawQuery == b.RawQuery && b.User == nil {
			return true
		}
	}
	return false
}

func (s *fakeService) client(id string) *fakeClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

func errorPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><p>%s</p>", template.HTMLEscapeString(msg))
}

// checkAuthRequest validates q; it writes the error and returns false.
func (s *fakeService) checkAuthRequest(w http.ResponseWriter, r *http.Request, q url.Values) (*fakeClient, bool) {
	c := s.client(q.Get("client_id"))
	if c == nil || !s.matchRedirect(c, q.Get("redirect_uri")) {
		errorPage(w, 400, "unknown client or redirect URI")
		return nil, false
	}
	fail := func(code string) (*fakeClient, bool) {
		u, _ := url.Parse(q.Get("redirect_uri"))
		v := u.Query()
		v.Set("error", code)
		v.Set("error_description", code)
		v.Set("state", q.Get("state"))
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
		return nil, false
	}
	switch {
	case q.Get("response_type") != "code":
		return fail("unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		return fail("invalid_request")
	case q.Get("scope") != "" && q.Get("scope") != "mcp":
		return fail("invalid_scope")
	case q.Has("resource") && q.Get("resource") != s.base+"/mcp" && q.Get("resource") != s.base:
		return fail("invalid_target")
	}
	return c, true
}

// sessionUser returns the user of the auth_token cookie, or "".
func (s *fakeService) sessionUser(r *http.Request) string {
	c, err := r.Cookie("auth_token")
	if err != nil {
		return ""
	}
	sub, err := s.verifyJWT(c.Value)
	if err != nil {
		return ""
	}
	return sub
}

func (s *fakeService) csrf(user string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("csrf|" + user))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *fakeService) csrfOK(r *http.Request, user string) bool {
	return s.faults["consent-no-csrf-check"] || hmac.Equal([]byte(r.PostFormValue("csrf_token")), []byte(s.csrf(user)))
}

func (s *fakeService) toLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/auth/login?return_to="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
}

var consentTmpl = template.Must(template.New("c").Parse(`<!doctype html><title>Consent</title>
<p>{{.Name}} at {{.Host}} wants access.</p>
<form method="post" action="/oauth/authorize">
{{range $k, $v := .Fields}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>`))

func (s *fakeService) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, ok := s.checkAuthRequest(w, r, q)
	if !ok {
		return
	}
	user := s.sessionUser(r)
	if user == "" {
		s.toLogin(w, r)
		return
	}
	fields := map[string]string{}
	for k := range q {
		fields[k] = q.Get(k)
	}
	ru, _ := url.Parse(q.Get("redirect_uri"))
	if !s.faults["no-frame-headers"] {
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = consentTmpl.Execute(w, map[string]any{"Name": c.name, "Host": ru.Host, "Fields": fields, "CSRF": s.csrf(user)})
}

func (s *fakeService) consent(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		errorPage(w, 400, "bad form")
		return
	}
	q := r.PostForm
	user := s.sessionUser(r)
	if user == "" || !s.csrfOK(r, user) {
		errorPage(w, 403, "session or CSRF token missing")
		return
	}
	if _, ok := s.checkAuthRequest(w, r, q); !ok {
		return
	}
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := u.Query()
	v.Set("state", q.Get("state"))
	if q.Get("action") != "approve" {
		v.Set("error", "access_denied")
	} else {
		s.mu.Lock()
		code := s.rand()
		s.codes[code] = &fakeCode{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), sub: user, issued: s.now}
		s.mu.Unlock()
		v.Set("code", code)
	}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// issueJWT issues a token for sub; the caller holds s.mu.
func (s *fakeService) issueJWT(sub string) (string, string) {
	jti := s.rand()
	return signJWT(map[string]any{"alg": "HS256", "typ": "JWT"}, map[string]any{
		"sub": sub, "iat": s.now.Unix(), "exp": s.now.Add(24 * time.Hour).Unix(), "jti": jti,
		"iss": s.base, "aud": s.base + "/mcp",
	}, s.key), jti
}

func (s *fakeService) verifyJWT(tok string) (string, error) {
	header, claims, err := decodeJWT(tok)
	if err != nil {
		return "", err
	}
	if header["alg"] != "HS256" && !(s.faults["ping-accept-none"] && header["alg"] == "none") {
		return "", fmt.Errorf("alg %v", header["alg"])
	}
	if header["alg"] == "HS256" {
		i := strings.LastIndexByte(tok, '.')
		m := hmac.New(sha256.New, s.key)
		m.Write([]byte(tok[:i]))
		if !hmac.Equal([]byte(b64.EncodeToString(m.Sum(nil))), []byte(tok[i+1:])) {
			return "", fmt.Errorf("bad signature")
		}
	}
	exp, err := numClaim(claims, "exp")
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.faults["jwt-no-expiry"] && s.now.After(time.Unix(exp, 0).Add(30*time.Second)) {
		return "", fmt.Errorf("expired")
	}
	if jti, _ := claims["jti"].(string); s.revoked[jti] {
		return "", fmt.Errorf("revoked")
	}
	sub, _ := claims["sub"].(string)
	return sub, nil
}

func (s *fakeService) tokenResponse(w http.ResponseWriter, tok string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 86400})
}

// readForm parses a JSON or form body into values; false for other types.
func readForm(w http.ResponseWriter, r *http.Request, allowJSON bool) (url.Values, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		if r.ParseForm() != nil {
			return nil, false
		}
		return r.PostForm, true
	case mt == "application/json" && allowJSON:
		var m map[string]string
		if json.NewDecoder(r.Body).Decode(&m) != nil {
			return nil, false
		}
		v := url.Values{}
		for k, x := range m {
			v.Set(k, x)
		}
		return v, true
	}
	return nil, false
}

func (s *fakeService) token(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r, false)
	if !ok {
		s.oauthErr(w, 400, "invalid_request")
		return
	}
	switch f.Get("grant_type") {
	case "":
		s.oauthErr(w, 400, "invalid_request")
	case flows.GrantTypeDeviceCode:
		s.pollDevice(w, f)
	case "authorization_code":
		s.exchange(w, f)
	default:
		s.oauthErr(w, 400, "unsupported_grant_type")
	}
}

func (s *fakeService) exchange(w http.ResponseWriter, f url.Values) {
	if f.Get("code") == "" || f.Get("code_verifier") == "" || !pkce.ValidVerifier(f.Get("code_verifier")) {
		s.oauthErr(w, 400, "invalid_request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.codes[f.Get("code")]
	switch {
	case c == nil:
		s.oauthErr(w, 400, "invalid_grant")
	case c.used:
		if !s.faults["reuse-no-revoke"] {
			for _, j := range c.jtis {
				s.revoked[j] = true
			}
		}
		s.oauthErr(w, 400, "invalid_grant")
	case !s.faults["code-no-expiry"] && s.now.Sub(c.issued) >= 10*time.Minute:
		s.oauthErr(w, 400, "invalid_grant")
	case c.clientID != f.Get("client_id") || c.redirectURI != f.Get("redirect_uri") || !pkce.Verify(f.Get("code_verifier"), c.challenge):
		s.oauthErr(w, 400, "invalid_grant")
	default:
		c.used = true
		tok, jti := s.issueJWT(c.sub)
		c.jtis = append(c.jtis, jti)
		s.tokenResponse(w, tok)
	}
}

func normUserCode(c string) string { return strings.ToUpper(strings.ReplaceAll(c, "-", "")) }

func (s *fakeService) deviceCode(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r, true)
	if !ok {
		s.oauthErr(w, 400, "invalid_request")
		return
	}
	if s.client(f.Get("client_id")) == nil {
		s.oauthErr(w, 401, "invalid_client")
		return
	}
	if sc := f.Get("scope"); sc != "" && sc != "mcp" {
		s.oauthErr(w, 400, "invalid_scope")
		return
	}
	s.mu.Lock()
	dc := s.rand()
	s.seq++
	uc := fmt.Sprintf("%c%c%c%c-%04d", 'B'+s.seq%20, 'C'+s.seq/20%20, 'D', 'F', s.seq%10000)
	s.devices[dc] = &fakeDevice{clientID: f.Get("client_id"), userCode: uc, issued: s.now, interval: 5 * time.Second, state: "pending"}
	s.userCodes[normUserCode(uc)] = dc
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{
		"device_code": dc, "user_code": uc, "verification_uri": s.base + "/auth/device",
		"verification_uri_complete": s.base + "/auth/device?user_code=" + url.QueryEscape(uc), "expires_in": 900, "interval": 5,
	})
}

func (s *fakeService) deviceToken(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r, true)
	if !ok {
		s.oauthErr(w, 400, "invalid_request")
		return
	}
	switch f.Get("grant_type") {
	case "":
		s.oauthErr(w, 400, "invalid_request")
	case flows.GrantTypeDeviceCode:
		s.pollDevice(w, f)
	default:
		s.oauthErr(w, 400, "unsupported_grant_type")
	}
}

func (s *fakeService) pollDevice(w http.ResponseWriter, f url.Values) {
	if f.Get("device_code") == "" {
		s.oauthErr(w, 400, "invalid_request")
		return
	}
	if s.client(f.Get("client_id")) == nil {
		s.oauthErr(w, 401, "invalid_client")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[f.Get("device_code")]
	switch {
	case d == nil || d.clientID != f.Get("client_id") || d.state == "spent":
		s.oauthErr(w, 400, "invalid_grant")
		return
	case s.now.Sub(d.issued) >= 900*time.Second:
		s.oauthErr(w, 400, "expired_token")
		return
	case !s.faults["no-slow-down"] && !d.lastPoll.IsZero() && s.now.Sub(d.lastPoll) < d.interval:
		if !s.faults["device-interval-not-raised"] {
			d.interval += 5 * time.Second
		}
		d.lastPoll = s.now
		s.oauthErr(w, 400, "slow_down")
		return
	}
	d.lastPoll = s.now
	switch d.state {
	case "approved":
		d.state = "spent"
		tok, _ := s.issueJWT(d.sub)
		s.tokenResponse(w, tok)
	case "denied":
		d.state = "spent"
		s.oauthErr(w, 400, "access_denied")
	default:
		s.oauthErr(w, 400, "authorization_pending")
	}
}

// bearerUser authenticates the request, writing the 401 itself.
func (s *fakeService) bearerUser(w http.ResponseWriter, r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	user := ""
	if strings.EqualFold(scheme, "bearer") && tok != "" {
		s.mu.Lock()
		keys := append([]string{s.apiKey}, s.oldKeys...)
		s.mu.Unlock()
		if strings.HasPrefix(tok, "mcpa_") {
			for _, k := range keys {
				if hmac.Equal([]byte(tok), []byte(k)) {
					user = fakeUser
				}
			}
		} else if sub, err := s.verifyJWT(tok); err == nil {
			user = sub
		}
	}
	if user != "" {
		return user, true
	}
	ch := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource"`, s.base)
	if !s.faults["challenge-no-scope"] {
		ch += `, scope="mcp"`
	}
	if h != "" {
		ch += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", ch)
	writeJSON(w, 401, map[string]string{"error": "invalid_token"})
	return "", false
}

func (s *fakeService) ping(w http.ResponseWriter, r *http.Request) {
	if u, ok := s.bearerUser(w, r); ok {
		writeJSON(w, 200, map[string]string{"status": "ok", "user_id": u})
	}
}

func (s *fakeService) mcp(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.bearerUser(w, r); ok {
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"protocolVersion": "2025-11-25"}})
	}
}

func (s *fakeService) login(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	state := s.rand()
	s.loginStates[state] = r.URL.Query().Get("return_to")
	s.mu.Unlock()
	q := url.Values{"state": {state}, "nonce": {randomString(8)}, "code_challenge": {pkce.S256(randomString(32))},
		"code_challenge_method": {"S256"}, "redirect_uri": {s.base + "/auth/callback"}}
	http.Redirect(w, r, s.base+"/idp/authorize?"+q.Encode(), http.StatusFound)
}

func (s *fakeService) idpPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><form method=post><input type=hidden name=state value="%s">
<label>User <input name=username></label><button type=submit>Log in</button></form>`, template.HTMLEscapeString(r.URL.Query().Get("state")))
}

func (s *fakeService) idpSubmit(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("username") == "" {
		errorPage(w, 400, "user name required")
		return
	}
	s.mu.Lock()
	code := s.rand()
	s.idpCodes[code] = r.PostForm.Get("username")
	s.mu.Unlock()
	http.Redirect(w, r, "/auth/callback?code="+code+"&state="+url.QueryEscape(r.PostForm.Get("state")), http.StatusFound)
}

func (s *fakeService) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	ret, okState := s.loginStates[q.Get("state")]
	user, okCode := s.idpCodes[q.Get("code")]
	delete(s.loginStates, q.Get("state"))
	delete(s.idpCodes, q.Get("code"))
	var tok string
	if okState && okCode {
		tok, _ = s.issueJWT(user)
	}
	s.mu.Unlock()
	if tok == "" {
		errorPage(w, 400, "unknown login state")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "auth_token", Value: tok, Path: "/", MaxAge: 86400,
		HttpOnly: !s.faults["cookie-not-httponly"], Secure: true, SameSite: http.SameSiteLaxMode})
	if !strings.HasPrefix(ret, "/") || strings.HasPrefix(ret, "//") {
		ret = "/"
	}
	http.Redirect(w, r, ret, http.StatusFound)
}

func (s *fakeService) devicePage(w http.ResponseWriter, r *http.Request) {
	user := s.sessionUser(r)
	if user == "" {
		s.toLogin(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><form method="post" action="/auth/device"><input type="hidden" name="csrf_token" value="%s">
<input name="user_code" value="%s"><button type="submit">Continue</button></form>`,
		s.csrf(user), template.HTMLEscapeString(r.URL.Query().Get("user_code")))
}

func (s *fakeService) deviceSubmit(w http.ResponseWriter, r *http.Request) {
	user := s.sessionUser(r)
	if user == "" || r.ParseForm() != nil || !s.csrfOK(r, user) {
		errorPage(w, 403, "session or CSRF token missing")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dc := s.userCodes[normUserCode(r.PostForm.Get("user_code"))]
	d := s.devices[dc]
	if d == nil || d.state != "pending" || s.now.Sub(d.issued) >= 900*time.Second {
		errorPage(w, 400, "unknown or expired code")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.PostForm.Get("action") {
	case "":
		fmt.Fprintf(w, `<!doctype html><form method="post" action="/auth/device"><input type="hidden" name="csrf_token" value="%s">
<input type="hidden" name="user_code" value="%s">
<button type="submit" name="action" value="approve">Approve</button><button type="submit" name="action" value="deny">Deny</button></form>`,
			s.csrf(user), template.HTMLEscapeString(d.userCode))
	case "approve":
		d.state, d.sub = "approved", user
		fmt.Fprint(w, "<p>Approved.</p>")
	default:
		d.state = "denied"
		fmt.Fprint(w, "<p>Denied.</p>")
	}
}

func (s *fakeService) settings(w http.ResponseWriter, r *http.Request) {
	user := s.sessionUser(r)
	if user == "" {
		s.toLogin(w, r)
		return
	}
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><p>Your key: <code id="api-key">%s</code></p><form method="post" action="/settings">
<input type="hidden" name="csrf_token" value="%s"><button type="submit" name="action" value="regenerate">Regenerate</button></form>`, key, s.csrf(user))
}

func (s *fakeService) regenerate(w http.ResponseWriter, r *http.Request) {
	user := s.sessionUser(r)
	if user == "" || r.ParseForm() != nil || !s.csrfOK(r, user) || r.PostForm.Get("action") != "regenerate" {
		errorPage(w, 403, "session or CSRF token missing")
		return
	}
	s.mu.Lock()
	if s.faults["old-key-valid"] {
		s.oldKeys = append(s.oldKeys, s.apiKey)
	}
	s.apiKey = "mcpa_" + strings.Repeat("Zq9", 14) + fmt.Sprint(s.seq%10)
	s.seq++
	s.mu.Unlock()
	http.Redirect(w, r, "/settings", http.StatusSeeOther)
}

func (s *fakeService) clock(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var req struct {
			Advance string `json:"advance"`
		}
		d, err := time.Duration(0), json.NewDecoder(r.Body).Decode(&req)
		if err == nil {
			d, err = time.ParseDuration(req.Advance)
		}
		if err != nil || d < 0 {
			http.Error(w, "bad advance", 400)
			return
		}
		s.mu.Lock()
		s.now, s.offset = s.now.Add(d), s.offset+d
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"now": s.now.Format(time.RFC3339Nano), "offset_ms": s.offset.Milliseconds()})
}

// target returns a Target for the fake with a form approver and its clock.
func (s *fakeService) target(t *testing.T) Target {
	t.Helper()
	a, err := NewFormApprover(s.base, fakeUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Target{BaseURL: s.base, Approver: a, Clock: &HTTPClock{URL: s.base + "/_clock"}}
}
