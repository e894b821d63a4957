package flows

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/pkce"
)

// DefaultLoginTimeout bounds how long AuthCode waits for the browser.
const DefaultLoginTimeout = 5 * time.Minute

// AuthCodeConfig configures the authorization code flow with PKCE.
type AuthCodeConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock
	Discovery  *Discovery
	Client     Client
	// OpenBrowser sends the user to the authorization URL. It is called, on
	// its own goroutine, once the loopback listener is up; AuthCode does not
	// wait for it to return. An error it returns before the callback arrives
	// ends the flow (to fall back to printing the URL, print it and return
	// nil). Required.
	OpenBrowser func(authURL string) error
	// Port for the loopback listener. 0 tries the ports of the client's
	// registered loopback redirect URIs, then a free port.
	Port       int
	Timeout    time.Duration // 0 means DefaultLoginTimeout
	NoResource bool          // omit the RFC 8707 resource parameter
	Scope      string        // "" means Discovery.Scope
	// DPoP, when set, binds the tokens to its key (RFC 9449): the code
	// exchange carries a proof, and the answer must be token_type DPoP.
	DPoP *DPoP
	// Reregister, when set, is called once if the server rejects a
	// registered or cached client with invalid_client; the flow then starts
	// over with the new client. ClientConfig.Reregister fits.
	Reregister func(ctx context.Context) (Client, error)
	// Preflight asks the authorization endpoint about the request before
	// the browser does, and ends the flow at once when the endpoint refuses
	// it (preflight.go). For requests built from a server's words, such as
	// a step-up's scope: a browser would only show the refusal while the
	// flow waited out its timeout.
	Preflight bool
	// Account names the account a new token is for, for the browser's
	// "Signed in" page (e.g. from the server's ping). nil reads the name
	// from the access token's claims when it is a JWT.
	Account func(ctx context.Context, tok *Token) string
}

// AuthRequest is one authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3,
// RFC 8707 §2). Fields left empty are omitted from the URL.
type AuthRequest struct {
	Endpoint    string
	ClientID    string
	RedirectURI string
	Scope       string
	State       string
	Verifier    string // the challenge sent is S256(Verifier)
	Resource    string
}

// URL returns the authorization URL, keeping any query the endpoint has
// (RFC 6749 §3.1).
func (r *AuthRequest) URL() string {
	u, err := url.Parse(r.Endpoint)
	if err != nil {
		return ""
	}
	q := u.Query()
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("response_type", "code")
	set("client_id", r.ClientID)
	set("redirect_uri", r.RedirectURI)
	set("scope", r.Scope)
	set("state", r.State)
	if r.Verifier != "" {
		set("code_challenge", pkce.S256(r.Verifier))
		set("code_challenge_method", pkce.MethodS256)
	}
	set("resource", r.Resource)
	u.RawQuery = q.Encode()
	return u.String()
}

// NewRequest builds an authorization request with a fresh state and PKCE
// verifier for redirectURI.
func (cfg AuthCodeConfig) NewRequest(redirectURI string) (*AuthRequest, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := oauthwire.CheckScopeLength(cfg.scope()); err != nil {
		return nil, err
	}
	verifier, err := pkce.NewVerifier()
	if err != nil {
		return nil, err
	}
	state, err := randomState()
	if err != nil {
		return nil, err
	}
	r := &AuthRequest{
		Endpoint:    cfg.Discovery.AuthServer.AuthorizationEndpoint,
		ClientID:    cfg.Client.ID,
		RedirectURI: redirectURI,
		Scope:       cfg.scope(),
		State:       state,
		Verifier:    verifier,
	}
	if !cfg.NoResource {
		r.Resource = cfg.Discovery.Resource
	}
	return r, nil
}

// Authorize runs the front channel of req with approve standing in for the
// browser and the loopback listener: approve is given the authorization URL
// and returns the URL the server redirected the user agent to. The redirect
// is checked as the listener checks it (checkCallback); the code it returns
// is ready for Exchange.
func (cfg AuthCodeConfig) Authorize(ctx context.Context, req *AuthRequest, approve func(ctx context.Context, authURL string) (*url.URL, error)) (string, error) {
	if err := cfg.check(); err != nil {
		return "", err
	}
	u, err := approve(ctx, req.URL())
	if err != nil {
		return "", fmt.Errorf("authorization: %w", err)
	}
	code, err := checkCallback(u.Query(), cfg.callbackCheck(req))
	if err != nil {
		return "", fmt.Errorf("authorization response: %w", err)
	}
	return code, nil
}

func (cfg AuthCodeConfig) callbackCheck(req *AuthRequest) callbackWant {
	md := cfg.Discovery.AuthServer
	return callbackWant{State: req.State, Issuer: md.Issuer, RequireIss: md.AuthorizationResponseIssParameterSupported}
}

// Exchange trades code for a token at the token endpoint (RFC 6749 §4.1.3,
// RFC 7636 §4.5), repeating the request's redirect URI and resource.
func (cfg AuthCodeConfig) Exchange(ctx context.Context, req *AuthRequest, code string) (*Token, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	md := cfg.Discovery.AuthServer
	endpoint := md.TokenEndpoint
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {req.RedirectURI},
		"code_verifier": {req.Verifier}, "resource": {req.Resource}}
	tok, _, err := TokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: endpoint, Issuer: md.Issuer,
		Client: cfg.Client, DPoP: cfg.DPoP}.Do(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("token exchange at %s: %w", endpoint, err)
	}
	if tok.Scope == "" {
		tok.Scope = req.Scope // RFC 6749 §5.1: omitted means what was asked
	}
	return tok, nil
}

// AuthCode runs the authorization code flow with PKCE through a loopback
// redirect: listen on 127.0.0.1, open the browser, wait for the callback
// (state, then iss, then code or error), exchange the code.
func AuthCode(ctx context.Context, cfg AuthCodeConfig) (*Token, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.OpenBrowser == nil {
		return nil, errors.New("auth code flow: OpenBrowser is required")
	}
	tok, err := cfg.run(ctx)
	if err == nil || !errors.Is(err, ErrInvalidClient) || cfg.Reregister == nil ||
		(cfg.Client.Source != SourceRegistered && cfg.Client.Source != SourceCache) {
		return tok, err
	}
	c, rerr := cfg.Reregister(ctx)
	if rerr != nil {
		return nil, fmt.Errorf("%w; re-registering failed: %w", err, rerr)
	}
	cfg.Client = c
	return cfg.run(ctx)
}

func (cfg AuthCodeConfig) run(ctx context.Context) (*Token, error) {
	ln, err := cfg.listen()
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	req, err := cfg.NewRequest(ln.RedirectURI())
	if err != nil {
		return nil, err
	}
	if err := cfg.preflight(ctx, req); err != nil {
		return nil, err
	}

	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	timedOut := make(chan struct{})
	timer := clockOr(cfg.Clock).After(timeout)
	go func() {
		select {
		case <-timer:
			close(timedOut)
			cancel()
		case <-ctx2.Done():
		}
	}()

	// Wait runs before the browser opens, so the first callback finds it.
	type result struct {
		code   string
		finish func(page)
		err    error
	}
	res := make(chan result, 1)
	go func() {
		code, finish, err := ln.waitHeld(ctx2, cfg.callbackCheck(req))
		res <- result{code, finish, err}
	}()
	// OpenBrowser runs on its own goroutine: some launchers block until the
	// browser exits, and a test browser follows the redirects itself.
	ln.SetStart(req.URL())
	opened := make(chan error, 1)
	go func() { opened <- cfg.OpenBrowser(req.URL()) }()
	var r result
	select {
	case r = <-res:
	case err := <-opened:
		if err != nil {
			cancel()
			<-res
			return nil, fmt.Errorf("opening the browser: %w", err)
		}
		r = <-res
	}
	if r.err != nil {
		select {
		case <-timedOut:
			if n := ln.Ignored(); n > 0 {
				return nil, fmt.Errorf("%w after %s (ignored %d response(s) with a wrong state)", ErrTimeout, timeout, n)
			}
			return nil, fmt.Errorf("%w after %s", ErrTimeout, timeout)
		default:
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("auth code flow: %w", ctx.Err())
		}
		return nil, fmt.Errorf("authorization response: %w", r.err)
	}
	// The browser waits for the exchange, so its page says how it ended.
	tok, err := cfg.Exchange(ctx, req, r.code)
	if err != nil {
		r.finish(failurePage(err))
		return nil, err
	}
	r.finish(signedInPage(cfg.serverName(), cfg.account(ctx, tok)))
	return tok, nil
}

// serverName is what the "Signed in" page names: the MCP server, else the
// authorization server.
func (cfg AuthCodeConfig) serverName() string {
	if cfg.Discovery.Resource != "" {
		return cfg.Discovery.Resource
	}
	return cfg.Discovery.Issuer
}

func (cfg AuthCodeConfig) account(ctx context.Context, tok *Token) string {
	if cfg.Account != nil {
		return cfg.Account(ctx, tok)
	}
	return accountFromJWT(tok.AccessToken)
}

// listen binds the loopback listener: cfg.Port if set, else the ports of
// the client's registered loopback redirect URIs, else a free port.
func (cfg AuthCodeConfig) listen() (*loopback, error) {
	if cfg.Port != 0 {
		return listenLoopback(cfg.Port)
	}
	for _, ru := range cfg.Client.RedirectURIs {
		u, err := url.Parse(ru)
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Path != callbackPath {
			continue
		}
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 {
			if ln, err := listenLoopback(p); err == nil {
				return ln, nil
			}
		}
	}
	return listenLoopback(0)
}

func (cfg AuthCodeConfig) check() error {
	if cfg.Discovery == nil || cfg.Discovery.AuthServer == nil {
		return errors.New("auth code flow: no authorization server metadata")
	}
	if cfg.Discovery.AuthServer.AuthorizationEndpoint == "" {
		return errors.New("auth code flow: the authorization server has no authorization_endpoint")
	}
	if cfg.Client.ID == "" {
		return errors.New("auth code flow: no client ID")
	}
	return nil
}

func (cfg AuthCodeConfig) scope() string {
	if cfg.Scope != "" {
		return WithOfflineAccess(cfg.Scope, cfg.Discovery.AuthServer)
	}
	return cfg.Discovery.Scope
}

func randomState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating state: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
