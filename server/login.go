package server

import (
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
		s.logError(r, "parsing base URL", err)
		s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Please try again.", "")
		return
	}
	st := loginState{ReturnTo: safeReturnTo(base, r.URL.Query().Get("return_to")), Expires: s.clock.Now().Add(loginStateTTL).Unix()}
	if st.State, err = randomToken(24); err == nil {
		if st.Nonce, err = randomToken(24); err == nil {
			st.Verifier, err = pkce.NewVerifier()
		}
	}
	if err != nil {
		s.logError(r, "generating login state", err)
		s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Please try again.", "")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: loginStateCookie, Value: s.signCookie(st), Path: "/auth/callback",
		MaxAge: int(loginStateTTL / time.Second), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, oc.AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), http.StatusFound)
}

func (s *Server) handleCallback(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string, err error) {
		if err != nil {
			s.logError(r, "login callback", err)
		}
		s.renderError(w, r, status, "Sign-in failed", msg, "")
	}
	c, err := r.Cookie(loginStateCookie)
	if err != nil {
		fail(http.StatusBadRequest, "This sign-in link has expired or was opened in another browser. Start again.", nil)
		return
	}
	st, ok := s.openCookie(c.Value)
	if !ok || s.clock.Now().Unix() > st.Expires {
		fail(http.StatusBadRequest, "This sign-in attempt has expired. Start again.", nil)
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		fail(http.StatusBadRequest, "The sign-in response does not match this browser's sign-in attempt.", nil)
		return
	}
	// The state is spent whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: loginStateCookie, Value: "", Path: "/auth/callback", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	if e := q.Get("error"); e != "" {
		fail(http.StatusForbidden, "The identity provider refused the sign-in ("+truncate(e, 60)+").", nil)
		return
	}
	oc, verifier, err := s.login.provider(r.Context())
	if err != nil {
		fail(http.StatusBadGateway, "The identity provider could not be reached.", err)
		return
	}
	ctx := s.login.context(r.Context())
	tok, err := oc.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		fail(http.StatusBadGateway, "The identity provider did not accept the sign-in.", err)
		return
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := verifier.Verify(ctx, rawID)
	if err != nil {
		fail(http.StatusBadGateway, "The identity provider's answer could not be verified.", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		fail(http.StatusBadRequest, "The identity provider's answer does not belong to this sign-in.", nil)
		return
	}
	var profile struct {
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
	}
	_ = idt.Claims(&profile)
	user, err := s.userForLogin(r.Context(), firstNonEmpty(s.cfg.Login.SubjectNamespace, idt.Issuer)+"|"+idt.Subject, firstNonEmpty(profile.PreferredUsername, profile.Name, idt.Subject))
	if err != nil {
		fail(http.StatusInternalServerError, "Please try again.", err)
		return
	}
	if err := s.startSession(w, user.ID); err != nil {
		fail(http.StatusInternalServerError, "Please try again.", err)
		return
	}
	s.log.Info("user signed in", "request_id", requestID(r.Context()), "user_id", user.ID)
	http.Redirect(w, r, st.ReturnTo, http.StatusFound)
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
			s.renderError(w, r, http.StatusForbidden, "Request refused", "The form was stale or did not come from this site. Reload and try again.", "invalid_csrf")
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

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
