package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// authzRequest is a validated authorization request (RFC 6749 §4.1.1).
type authzRequest struct {
	Client        store.Client
	RedirectURI   string
	State         string
	CodeChallenge string
	Scope         string
	Resource      string
}

// authzParams are carried from the consent page back to the decision POST.
var authzParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"}

// pageError is an authorization error that must not redirect: the client
// or redirect URI cannot be trusted (decisions.md "Authorization endpoint").
type pageError struct {
	Status        int
	Message, Code string
	// Title replaces the page's "not valid" heading, and RetryAfter is sent
	// as Retry-After, for a refusal that passes (a limit).
	Title      string
	RetryAfter time.Duration
	// Steps say what the person can do about it; nil means the default
	// (start again from the application, then tell its developer).
	Steps []string
}

// Ways forward from an authorization error page. The person did nothing
// wrong: the application sent them with a request we refuse.
const (
	stepRestart    = "Go back to the application that sent you here and start the sign-in again."
	stepDeveloper  = "If it fails again, the application is set up wrongly: tell its developer, quoting the error code and request ID below."
	stepReregister = "An application whose registration was removed registers again when it starts over; with mcpauth, run mcpauth login again."
	stepRedirect   = "Nothing was sent to the application. Its developer must register this return address, or use one it registered."
)

// badRequestPage is a pageError for a request that cannot be served as sent.
func badRequestPage(status int, msg, code string) *pageError {
	return &pageError{Status: status, Message: msg, Code: code}
}

// renderPageError shows perr as the authorization error page.
func (s *Server) renderPageError(w http.ResponseWriter, r *http.Request, perr *pageError) {
	title := "This sign-in request is not valid"
	if perr.Title != "" {
		title = perr.Title
	}
	if perr.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(perr.RetryAfter)))
	}
	steps := perr.Steps
	if steps == nil {
		steps = []string{stepRestart, stepDeveloper}
	}
	page := s.errorPage(r, title, perr.Message, perr.Code)
	page.Steps = steps
	s.render(w, r, perr.Status, pages.Error, page)
}

// parseAuthorize validates params. A pageError means show an HTML page and
// never redirect; an oauthError means redirect it to the (trusted)
// redirect URI with the state.
func (s *Server) parseAuthorize(ctx context.Context, params url.Values) (authzRequest, *pageError, *oauthError) {
	var req authzRequest
	for _, k := range []string{"client_id", "redirect_uri"} {
		if len(params[k]) > 1 {
			return req, badRequestPage(http.StatusBadRequest, "The request repeats the "+k+" parameter.", errInvalidRequest), nil
		}
	}
	clientID := params.Get("client_id")
	if clientID == "" {
		return req, badRequestPage(http.StatusBadRequest, "The request does not name a client (client_id is missing).", errInvalidRequest), nil
	}
	c, err := s.client(ctx, clientID)
	var ce *cimdError
	var ue *cimdUnavailableError
	if errors.As(err, &ue) {
		return req, ue.pageError(), nil
	}
	if errors.As(err, &ce) {
		return req, badRequestPage(http.StatusBadRequest, "The application's client metadata document ("+truncate(clientID, 200)+") cannot be used: "+ce.reason+".", errInvalidClient), nil
	}
	if isNotFound(err) {
		perr := badRequestPage(http.StatusBadRequest, "The application asking for access is not registered here.", errInvalidClient)
		perr.Steps = []string{stepRestart, stepReregister, stepDeveloper}
		return req, perr, nil
	}
	if err != nil {
		return req, badRequestPage(http.StatusInternalServerError, "Something went wrong. Try again.", errServerError), nil
	}
	req.Client = c
	req.RedirectURI = params.Get("redirect_uri")
	if req.RedirectURI == "" || !redirectURIRegistered(c.RedirectURIs, req.RedirectURI) {
		perr := badRequestPage(http.StatusBadRequest, "The application's return address is not one it registered, so you were not sent back to it.", errInvalidRequest)
		perr.Steps = []string{stepRedirect, stepRestart, stepDeveloper}
		return req, perr, nil
	}
	// From here on errors go back to the client, with the state whenever
	// one unambiguous state was sent (RFC 6749 §4.1.2.1), even if another
	// parameter is repeated or malformed.
	if st := params["state"]; len(st) == 1 && utf8.ValidString(st[0]) {
		req.State = st[0]
	}
	p, oerr := singleValues(params)
	if oerr != nil {
		return req, nil, oerr
	}
	switch {
	case p["response_type"] == "":
		return req, nil, invalidRequest("response_type is required")
	case p["response_type"] != "code":
		return req, nil, newError(http.StatusBadRequest, errUnsupportedResponseType, "response_type must be code")
	case !containsString(c.GrantTypes, grantAuthCode):
		return req, nil, newError(http.StatusBadRequest, errUnauthorizedClient, "the client is not registered for the authorization_code grant")
	case p["code_challenge"] == "":
		return req, nil, invalidRequest("code_challenge is required (PKCE)")
	case p["code_challenge_method"] != pkce.MethodS256:
		return req, nil, invalidRequest("code_challenge_method must be S256")
	case !pkce.ValidChallenge(p["code_challenge"]):
		return req, nil, invalidRequest("code_challenge is not a base64url SHA-256 value")
	}
	req.CodeChallenge = p["code_challenge"]
	if req.Scope, oerr = normalizeScope(p["scope"]); oerr != nil {
		return req, nil, oerr
	}
	if req.Resource, oerr = s.checkResource(p["resource"]); oerr != nil {
		return req, nil, oerr
	}
	return req, nil, nil
}

// checkResourceParam judges an optional RFC 8707 resource parameter at
// the token endpoint (code exchange and refresh alike): absent is fine.
func (s *Server) checkResourceParam(resource string) *oauthError {
	if resource == "" {
		return nil
	}
	_, oerr := s.checkResource(resource)
	return oerr
}

// checkResource applies RFC 8707: the resource, when named, must be this
// server's MCP endpoint (or the server itself).
func (s *Server) checkResource(resource string) (string, *oauthError) {
	if resource == "" || resource == s.resource || resource == s.baseURL {
		return resource, nil
	}
	return "", newError(http.StatusBadRequest, errInvalidTarget, "resource must be %s", s.resource)
}

// redirectURIRegistered matches exactly, except that a loopback IP literal
// may use any port (RFC 8252 §7.3), so a CLI can listen on a free port.
func redirectURIRegistered(registered []string, got string) bool {
	for _, r := range registered {
		if r == got || loopbackPortVariant(r, got) {
			return true
		}
	}
	return false
}

func loopbackPortVariant(registered, got string) bool {
	a, err1 := url.Parse(registered)
	b, err2 := url.Parse(got)
	if err1 != nil || err2 != nil || a.Scheme != "http" || b.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(a.Hostname())
	if ip == nil || !ip.IsLoopback() || a.Hostname() != b.Hostname() {
		return false
	}
	if port := b.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	// Byte for byte the same apart from the port, so no difference in case,
	// escaping or an empty "?" or "#" slips through (RFC 6749 §3.1.2.3
	// compares strings).
	return a.User == nil && b.User == nil && a.Fragment == "" && withoutPort(registered) == withoutPort(got)
}

// withoutPort removes the port from the authority of raw, leaving every
// other byte as it was.
func withoutPort(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if c := strings.LastIndexByte(auth, ':'); c > strings.LastIndexByte(auth, ']') {
		auth = auth[:c]
	}
	return raw[:i+3] + auth + rest[end:]
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if ok, wait := s.limits.authorize.Allow(q.Get("client_id") + "|" + s.limits.caller(clientAddr(r))); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		s.renderError(w, r, http.StatusTooManyRequests, "Too many requests", "This application is making too many sign-in requests. Wait a moment and try again.", errRateLimited)
		return
	}
	req, ok := s.authorizeRequest(w, r, q)
	if !ok {
		return
	}
	c := s.requireSession(w, r)
	if c == nil {
		return
	}
	hidden := make([]hiddenField, 0, len(authzParams))
	for _, k := range authzParams {
		if v := q.Get(k); v != "" {
			hidden = append(hidden, hiddenField{k, v})
		}
	}
	page := consentPage{
		pageBase:         s.base(c),
		clientView:       s.clientView(req.Client),
		RedirectHost:     redirectHost(req.RedirectURI),
		LoopbackRedirect: isLoopbackRedirect(req.RedirectURI),
		Access:           accessText(req.Scope),
		CSRF:             s.csrfToken(c),
		Hidden:           hidden,
	}
	page.Returns = page.RedirectHost
	if page.LoopbackRedirect {
		page.Returns += ", on this computer"
	}
	s.render(w, r, http.StatusOK, pages.Consent, page)
}

// handleAuthorizeDecision receives the consent form.
func (s *Server) handleAuthorizeDecision(w http.ResponseWriter, r *http.Request) {
	c, body := s.sessionForm(w, r, "Your session ended. Start the sign-in again from the application.", "Start the sign-in again.")
	if c == nil {
		return
	}
	params := url.Values{}
	for _, k := range authzParams {
		if v, ok := body[k]; ok {
			params[k] = v
		}
	}
	req, ok := s.authorizeRequest(w, r, params)
	if !ok {
		return
	}
	switch body.Get("action") {
	case "approve":
	case "deny":
		s.redirectError(w, r, req, newError(http.StatusBadRequest, errAccessDenied, "the user denied the request"))
		return
	default:
		s.renderError(w, r, http.StatusBadRequest, "Unknown action", "Nothing was changed.", errInvalidRequest)
		return
	}
	code, err2 := s.issueAuthCode(r.Context(), req, c.Subject)
	if err2 != nil {
		s.logError(r, "issuing authorization code", err2)
		s.redirectError(w, r, req, newError(http.StatusInternalServerError, errServerError, "internal error"))
		return
	}
	s.log.Info("authorization approved", "request_id", requestID(r.Context()), "user_id", c.Subject, "client_id", req.Client.ID)
	s.redirectTo(w, r, req, url.Values{"code": {code}})
}

func (s *Server) issueAuthCode(ctx context.Context, req authzRequest, userID string) (string, error) {
	now := s.clock.Now()
	for range 3 {
		code, err := randomToken(32)
		if err != nil {
			return "", err
		}
		err = s.store.CreateAuthCode(ctx, store.AuthCode{
			Hash: hashSecret(code), ClientID: req.Client.ID, RedirectURI: req.RedirectURI,
			CodeChallenge: req.CodeChallenge, Scope: req.Scope, Resource: req.Resource, UserID: userID,
			CreatedAt: now, ExpiresAt: now.Add(AuthCodeLifetime),
		})
		if err == nil {
			return code, nil
		}
		if !isAlreadyExists(err) {
			return "", err
		}
	}
	return "", errCollisions
}

// authorizeRequest parses params; when they fail it has shown the error page
// or redirected the error, and returns false.
func (s *Server) authorizeRequest(w http.ResponseWriter, r *http.Request, params url.Values) (authzRequest, bool) {
	req, perr, oerr := s.parseAuthorize(r.Context(), params)
	if perr != nil {
		s.renderPageError(w, r, perr)
		return req, false
	}
	if oerr != nil {
		s.redirectError(w, r, req, oerr)
		return req, false
	}
	return req, true
}

// redirectError sends an authorization error back to the client
// (RFC 6749 §4.1.2.1) with the state and our issuer (RFC 9207).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, req authzRequest, e *oauthError) {
	s.redirectTo(w, r, req, url.Values{"error": {e.Code}, "error_description": {e.Description}})
}

func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, req authzRequest, extra url.Values) {
	u, err := url.Parse(req.RedirectURI)
	if err != nil { // cannot happen: registered URIs were parsed at registration
		s.renderError(w, r, http.StatusBadRequest, "Invalid return address", "The application's return address is not valid.", errInvalidRequest)
		return
	}
	q := u.Query()
	for k, v := range extra {
		q[k] = v
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	q.Set("iss", s.baseURL)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// isLoopbackRedirect: the client listens on this computer (RFC 8252 §7.3).
func isLoopbackRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Host
}
