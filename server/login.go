package server

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// LoginConfig names the OpenID Connect provider browsers log in with.
type LoginConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// HTTPClient talks to the provider; nil means http.DefaultClient.
	HTTPClient *http.Client
	// SubjectNamespace scopes the provider's subjects when matching users;
	// empty means the issuer. The development provider listens on a random
	// port, so its issuer changes at every start: a fixed namespace keeps
	// "alice" the same user (and her API key) across restarts.
	SubjectNamespace string
}

const (
	sessionCookie    = "auth_token"
	loginStateCookie = "mcpauth_login"
	loginStateTTL    = 10 * time.Minute
)

// oidcLogin is the relying-party side of browser login. Provider discovery
// is lazy (and retried on failure) so a provider that is briefly down at
// start does not keep the server from starting.
type oidcLogin struct {
	cfg         LoginConfig
	redirectURL string
	clock       clock.Clock

	mu       sync.Mutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func newOIDCLogin(cfg LoginConfig, redirectURL string, clk clock.Clock) *oidcLogin {
	return &oidcLogin{cfg: cfg, redirectURL: redirectURL, clock: clk}
}

func (l *oidcLogin) context(ctx context.Context) context.Context {
	if l.cfg.HTTPClient != nil {
		return oidc.ClientContext(ctx, l.cfg.HTTPClient)
	}
	return ctx
}

func (l *oidcLogin) provider(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	if l.cfg.Issuer == "" {
		return nil, nil, errors.New("no identity provider configured")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.oauth != nil {
		return l.oauth, l.verifier, nil
	}
	p, err := oidc.NewProvider(l.context(ctx), l.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("discovering identity provider %s: %w", l.cfg.Issuer, err)
	}
	l.oauth = &oauth2.Config{
		ClientID:     l.cfg.ClientID,
		ClientSecret: l.cfg.ClientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  l.redirectURL,
		Scopes:       []string{oidc.ScopeOpenID, "profile"},
	}
	l.verifier = p.Verifier(&oidc.Config{ClientID: l.cfg.ClientID, Now: l.clock.Now})
	return l.oauth, l.verifier, nil
}

// loginState travels in a short-lived, HMAC-signed cookie between
// /auth/login and /auth/callback, so no server state is needed and any
// instance can finish a login another one started.
type loginState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Expires  int64  `json:"e"`
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	oc, _, err := s.login.provider(r.Context())
	if err != nil {
		s.logError(r, "starting login", err)
		s.renderError(w, r, http.StatusBadGateway, "Sign-in unavailable", "The identity provider could not be reached. Try again in a moment.", "")
		return
	}
	base, err := url.Parse(s.baseURL)
	if err != nil {
		s.renderFailure(w, r, "parsing base URL", err, "Please try again.")
		return
	}
	st := loginState{ReturnTo: safeReturnTo(base, r.URL.Query().Get("return_to")), Expires: s.clock.Now().Add(loginStateTTL).Unix()}
	if st.State, err = randomToken(24); err == nil {
		if st.Nonce, err = randomToken(24); err == nil {
			st.Verifier, err = pkce.NewVerifier()
		}
	}
	if err != nil {
		s.renderFailure(w, r, "generating login state", err, "Please try again.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: loginStateCookie, Value: s.signCookie(st), Path: "/auth/callback",
		MaxAge: int(loginStateTTL / time.Second), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, oc.AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), http.StatusFound)
}

func (s *Server) handleCallback(w http.ResponseWriter, r *http.Request) {
	// The browser's half of the sign-in is missing or stale: a request
	// this server cannot finish, so invalid_request.
	fail := func(status int, msg string) {
		s.renderError(w, r, status, "Sign-in failed", msg, errInvalidRequest)
	}
	c, err := r.Cookie(loginStateCookie)
	if err != nil {
		fail(http.StatusBadRequest, "This sign-in link has expired or was opened in another browser. Start again.")
		return
	}
	st, ok := s.openCookie(c.Value)
	if !ok || s.clock.Now().Unix() > st.Expires {
		fail(http.StatusBadRequest, "This sign-in attempt has expired. Start again.")
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		fail(http.StatusBadRequest, "The sign-in response does not match this browser's sign-in attempt.")
		return
	}
	// The state is spent whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: loginStateCookie, Value: "", Path: "/auth/callback", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	// From here on the response belongs to this browser's sign-in, so a
	// failure also ends the authorization request it was started for.
	abort := func(f loginFailure, err error) {
		if err != nil {
			s.logError(r, "login callback", err)
		}
		s.endSignIn(w, r, st.ReturnTo, f)
	}
	if e := q.Get("error"); e != "" {
		abort(providerFailure(e), nil)
		return
	}
	oc, verifier, err := s.login.provider(r.Context())
	if err != nil {
		abort(loginFailure{http.StatusBadGateway, errTemporarilyUnavailable, "the identity provider is unavailable", "Sign-in unavailable", "The identity provider could not be reached. Try again in a moment."}, err)
		return
	}
	ctx := s.login.context(r.Context())
	tok, err := oc.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		abort(loginFailure{http.StatusBadGateway, errServerError, "the identity provider did not accept the sign-in", "Sign-in failed", "The identity provider did not accept the sign-in."}, err)
		return
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := verifier.Verify(ctx, rawID)
	if err != nil {
		abort(loginFailure{http.StatusBadGateway, errServerError, "the identity provider's answer could not be verified", "Sign-in failed", "The identity provider's answer could not be verified."}, err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		abort(loginFailure{http.StatusBadRequest, errServerError, "the identity provider's answer does not belong to this sign-in", "Sign-in failed", "The identity provider's answer does not belong to this sign-in."}, nil)
		return
	}
	var profile struct {
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
	}
	_ = idt.Claims(&profile)
	internal := loginFailure{http.StatusInternalServerError, errServerError, "internal error", "Sign-in failed", "Please try again."}
	user, err := s.userForLogin(r.Context(), cmp.Or(s.cfg.Login.SubjectNamespace, idt.Issuer)+"|"+idt.Subject, cmp.Or(profile.PreferredUsername, profile.Name, idt.Subject))
	if err != nil {
		abort(internal, err)
		return
	}
	if err := s.startSession(w, user.ID); err != nil {
		abort(internal, err)
		return
	}
	s.log.Info("user signed in", "request_id", requestID(r.Context()), "user_id", user.ID)
	http.Redirect(w, r, st.ReturnTo, http.StatusFound)
}

// loginFailure is how a sign-in ended without a user: Code and Description
// go to the client of a pending authorization request, Title and Message to
// the person when there is none.
type loginFailure struct {
	Status            int
	Code, Description string
	Title, Message    string
}

// providerFailure maps the error an identity provider sent back
// (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6) to the error our own client gets:
// the person cancelling stays access_denied, a provider that is down is
// temporarily_unavailable, anything else is the provider's failure, not the
// client's, so server_error.
func providerFailure(code string) loginFailure {
	switch code {
	case errAccessDenied:
		return loginFailure{http.StatusForbidden, errAccessDenied, "the user cancelled sign-in at the identity provider",
			"Sign-in cancelled", "You cancelled the sign-in at the identity provider. Nothing was shared."}
	case errTemporarilyUnavailable:
		return loginFailure{http.StatusServiceUnavailable, errTemporarilyUnavailable, "the identity provider is temporarily unavailable",
			"Sign-in unavailable", "The identity provider is temporarily unavailable. Try again in a moment."}
	}
	return loginFailure{http.StatusBadGateway, errServerError, "the identity provider refused the sign-in",
		"Sign-in failed", "The identity provider refused the sign-in (" + truncate(code, 60) + ")."}
}

// endSignIn reports a sign-in that failed after its state was verified. When
// the sign-in was started for an authorization request (its return_to is
// /oauth/authorize), that request is answered with the error at the client's
// redirect URI, so a client waiting there (a CLI on a loopback port) stops at
// once instead of at its timeout. The request is validated again exactly as
// /oauth/authorize validates it: a client or redirect URI it would not
// accept gets no redirect, only the page.
func (s *Server) endSignIn(w http.ResponseWriter, r *http.Request, returnTo string, f loginFailure) {
	if req, ok := s.pendingAuthorization(r.Context(), returnTo); ok {
		s.log.Info("authorization ended at sign-in", "request_id", requestID(r.Context()), "client_id", req.Client.ID, "error", f.Code)
		s.redirectError(w, r, req, newError(f.Status, f.Code, "%s", f.Description))
		return
	}
	page := s.errorPage(r, f.Title, f.Message, f.Code)
	if u, err := url.Parse(returnTo); err == nil && u.Path != "/oauth/authorize" {
		// An authorization request that is not valid is not worth a
		// retry link: the application has to start a new one.
		page.Link, page.LinkText = "/auth/login?return_to="+url.QueryEscape(returnTo), "Sign in again"
	}
	s.render(w, r, f.Status, pages.Error, page)
}

// pendingAuthorization returns the authorization request returnTo names, if
// it is one that /oauth/authorize accepts far enough to redirect to its
// client (a known client and one of its redirect URIs).
func (s *Server) pendingAuthorization(ctx context.Context, returnTo string) (authzRequest, bool) {
	u, err := url.Parse(returnTo)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "/oauth/authorize" {
		return authzRequest{}, false
	}
	req, perr, _ := s.parseAuthorize(ctx, u.Query())
	if perr != nil {
		return authzRequest{}, false
	}
	return req, true
}

// userForLogin finds or creates the user for an identity-provider subject
// and makes sure they have an API key (service.md: one per user).
func (s *Server) userForLogin(ctx context.Context, subject, name string) (store.User, error) {
	u, err := s.store.GetUserBySubject(ctx, subject)
	switch {
	case err == nil:
		u.Name = name
	case isNotFound(err):
		id, rerr := randomToken(12)
		if rerr != nil {
			return store.User{}, rerr
		}
		u = store.User{ID: "u_" + id, Name: name, Subject: subject, CreatedAt: s.clock.Now()}
	default:
		return store.User{}, fmt.Errorf("looking up user: %w", err)
	}
	if err := s.store.UpsertUser(ctx, u); err != nil {
		return store.User{}, fmt.Errorf("storing user: %w", err)
	}
	s.names.put(u.ID, u.Name, s.clock.Now()) // a new name shows at once here
	// A key no configured sealing key opens still exists (and works): the
	// user signs in, and Settings offers a new one.
	if _, err := s.ensureAPIKey(ctx, u.ID); err != nil && !errors.Is(err, errKeyUnreadable) {
		return store.User{}, err
	}
	return u, nil
}

func (s *Server) startSession(w http.ResponseWriter, userID string) error {
	tok, err := s.tokens.IssueSession(userID)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: tok.Raw, Path: "/", MaxAge: int(AccessTokenLifetime / time.Second),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// session returns the signed-in user's claims, or nil. Only a session
// token counts: an OAuth access token in the cookie is no session.
func (s *Server) session(r *http.Request) *accessClaims {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	claims, err := s.tokens.Verify(r.Context(), c.Value)
	if err != nil {
		if !errors.Is(err, errInvalidCredential) {
			s.logError(r, "verifying session", err)
		}
		return nil
	}
	if !claims.isSession() {
		return nil
	}
	return claims
}

// requireSession returns the session or redirects to login and returns nil.
func (s *Server) requireSession(w http.ResponseWriter, r *http.Request) *accessClaims {
	if c := s.session(r); c != nil {
		return c
	}
	http.Redirect(w, r, "/auth/login?return_to="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
	return nil
}

// csrfToken is bound to the session's jti: a token from another session, or
// from before a re-login, does not validate.
func (s *Server) csrfToken(c *accessClaims) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("csrf\x00" + c.ID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) validCSRF(c *accessClaims, got string) bool {
	return subtle.ConstantTimeCompare([]byte(s.csrfToken(c)), []byte(got)) == 1
}

// reloadForm is what a refused form on a page of ours tells the user to do.
const reloadForm = "Reload and try again."

// refuseStaleForm answers a form whose CSRF token does not match the session;
// again says how to start over.
func (s *Server) refuseStaleForm(w http.ResponseWriter, r *http.Request, again string) {
	s.renderError(w, r, http.StatusForbidden, "Request refused", "The form was stale or did not come from this site. "+again, "invalid_csrf")
}

// sessionForm reads a form the signed-in user posted. When the session has
// ended, the body is not valid or the CSRF token does not match, it has
// answered with the error page and returns nil; ended and again are the
// page's advice for the first and last case.
func (s *Server) sessionForm(w http.ResponseWriter, r *http.Request, ended, again string) (*accessClaims, url.Values) {
	c := s.session(r)
	if c == nil {
		s.renderError(w, r, http.StatusUnauthorized, "Signed out", ended, "login_required")
		return nil, nil
	}
	form, oerr := readFormBody(r)
	if oerr != nil {
		s.renderError(w, r, oerr.Status, "This request is not valid", oerr.Description, oerr.Code)
		return nil, nil
	}
	if !s.validCSRF(c, form.Get("csrf_token")) {
		s.refuseStaleForm(w, r, again)
		return nil, nil
	}
	return c, form
}

func (s *Server) handleLogoutPage(w http.ResponseWriter, r *http.Request) {
	c := s.session(r)
	if c == nil {
		s.render(w, r, http.StatusOK, "logout", logoutPage{Done: true})
		return
	}
	s.render(w, r, http.StatusOK, "logout", logoutPage{pageBase: s.base(c), CSRF: s.csrfToken(c)})
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	form, oerr := readFormParams(r)
	c := s.session(r)
	if c != nil {
		if oerr != nil || !s.validCSRF(c, form["csrf_token"]) {
			s.refuseStaleForm(w, r, reloadForm)
			return
		}
		// Revoke the session token itself, so a copied cookie dies too.
		if err := s.revoke(r.Context(), c.ID, c.ExpiresAt.Time); err != nil {
			s.logError(r, "revoking session", err)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	s.render(w, r, http.StatusOK, "logout", logoutPage{Done: true})
}

func (s *Server) signCookie(st loginState) string {
	b, _ := json.Marshal(st)
	payload := base64.RawURLEncoding.EncodeToString(b)
	m := hmac.New(sha256.New, s.cookieKey)
	m.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) openCookie(v string) (loginState, bool) {
	payload, sig, ok := strings.Cut(v, ".")
	if !ok {
		return loginState{}, false
	}
	m := hmac.New(sha256.New, s.cookieKey)
	m.Write([]byte(payload))
	want := base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return loginState{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return loginState{}, false
	}
	var st loginState
	if json.Unmarshal(b, &st) != nil {
		return loginState{}, false
	}
	return st, true
}
