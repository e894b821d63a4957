package mcpsdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// ErrDPoPBound: the stored credential is bound to a DPoP key, and the SDK
// can send only Bearer tokens.
var ErrDPoPBound = errors.New("the stored credential is DPoP-bound, and the go-sdk transport sends Bearer tokens only; use flows.DPoP.Client for this server")

// Options are the optional parts of a Handler.
type Options struct {
	// Login logs in to server and stores the result where the Keeper
	// reads (creds.SaveLogin): it is called when there is no stored
	// credential, or when the server refused it and refreshing cannot
	// help. Nil: those failures are returned to the SDK as errors.
	Login func(ctx context.Context, server string) error
	// StepUp logs in to server again for scope (the granted scope plus
	// the one a 403 insufficient_scope asked for) and stores the result.
	// Nil: a 403 is returned as an error.
	StepUp func(ctx context.Context, server, scope string) error
	// MaxStepUps bounds the StepUp calls over the handler's life, so a
	// server that never accepts does not loop; 0 is
	// flows.DefaultMaxStepUps.
	MaxStepUps int
}

// Handler is an auth.OAuthHandler backed by a creds.Keeper for one MCP
// server. It is safe for concurrent use.
type Handler struct {
	keeper *creds.Keeper
	url    string
	origin flows.Origin
	opts   Options

	mu      sync.Mutex
	last    creds.Credential // the credential the last token came from
	stepUps int
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewOAuthHandler returns the handler for the MCP server at mcpURL, using
// the credential k finds for it. mcpURL must be an absolute http(s) URL:
// tokens go to its origin only.
func NewOAuthHandler(k *creds.Keeper, mcpURL string, opts Options) (*Handler, error) {
	if k == nil {
		return nil, errors.New("mcpsdk: no Keeper")
	}
	o, err := flows.OriginOf(mcpURL)
	if err != nil {
		return nil, fmt.Errorf("mcpsdk: the MCP URL: %w", err)
	}
	if opts.MaxStepUps <= 0 {
		opts.MaxStepUps = flows.DefaultMaxStepUps
	}
	return &Handler{keeper: k, url: mcpURL, origin: o, opts: opts}, nil
}

// Transport is a streamable HTTP transport to the handler's MCP URL with
// the handler, over hc (nil: http.DefaultClient) confined to that URL's
// origin: a redirect elsewhere is not followed, so the token stays with
// its server.
func (h *Handler) Transport(hc *http.Client) *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: flows.Confine(hc, h.origin), OAuthHandler: h}
}

// TokenSource implements auth.OAuthHandler. Each Token reads the stored
// credential again (refreshing it when it is about to expire), so a
// refresh or login by another process is picked up at once. When only a
// login would give a token and Options.Login is set, Token fails with an
// invalid_grant *oauth2.RetrieveError: the SDK then sends the request
// without a token, and the server's 401 leads to Authorize.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return tokenSource{ctx: ctx, h: h}, nil
}

type tokenSource struct {
	ctx context.Context
	h   *Handler
}

func (s tokenSource) Token() (*oauth2.Token, error) {
	c, err := s.h.credential(s.ctx)
	if err != nil {
		if s.h.opts.Login != nil && needsLogin(err) {
			return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: err.Error()}
		}
		return nil, err
	}
	return &oauth2.Token{AccessToken: c.Token, TokenType: "Bearer"}, nil
}

// credential loads the credential for the handler's server and keeps it
// for Authorize, after checking it may go there.
func (h *Handler) credential(ctx context.Context) (creds.Credential, error) {
	c, err := h.keeper.Fresh(ctx, h.url)
	if err != nil {
		return c, err
	}
	if err := h.check(c); err != nil {
		return creds.Credential{}, err
	}
	h.mu.Lock()
	h.last = c
	h.mu.Unlock()
	return c, nil
}

// check refuses a credential the SDK cannot send, or must not send to
// the handler's URL.
func (h *Handler) check(c creds.Credential) error {
	switch {
	case c.DPoP != nil:
		return fmt.Errorf("mcpsdk: %s: %w", h.url, ErrDPoPBound)
	case c.Server != "" && !flows.SameOrigin(c.Server, h.url):
		return &flows.CrossOriginError{Origin: h.origin, URL: c.Server}
	case c.Token == "":
		return fmt.Errorf("mcpsdk: the stored credential for %s holds no token", h.url)
	}
	return nil
}

// needsLogin reports an error only a new login fixes.
func needsLogin(err error) bool {
	var le *creds.LoginError
	return errors.As(err, &le) || errors.Is(err, creds.ErrAuthRequired)
}

// Authorize implements auth.OAuthHandler: after a 401 it refreshes the
// refused token (once, under the cross-process lock; another process's
// refresh or login counts), then logs in with Options.Login when that
// cannot help; after a 403 insufficient_scope it steps up with
// Options.StepUp. A nil return has the SDK send the request again.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	if !h.origin.Holds(req.URL) {
		return &flows.CrossOriginError{Origin: h.origin, URL: req.URL.Redacted()}
	}
	re := flows.NewResourceError(resp)
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return h.renew(ctx, sent, re)
	case http.StatusForbidden:
		return h.stepUp(ctx, sent, re)
	}
	return fmt.Errorf("mcpsdk: %s answered HTTP %d: %w", h.url, resp.StatusCode, re)
}

// renew replaces the token the server refused with a 401.
func (h *Handler) renew(ctx context.Context, sent string, re *flows.ResourceError) error {
	h.mu.Lock()
	last := h.last
	h.mu.Unlock()
	if sent != "" && last.Token == sent {
		n, ok, err := h.keeper.Retry(ctx, last)
		switch {
		case err != nil && !needsLogin(err):
			return err
		case ok && n.Token != sent:
			return nil
		}
	}
	// Nothing to refresh with: perhaps another process has logged in.
	if c, err := h.keeper.Fresh(ctx, h.url); err == nil && c.Token != sent {
		return h.check(c)
	}
	if h.opts.Login == nil {
		return &creds.LoginError{Server: h.url, Err: fmt.Errorf("%s refused the stored token and refreshing cannot replace it: %w", h.url, re)}
	}
	if err := h.opts.Login(ctx, h.url); err != nil {
		return fmt.Errorf("logging in to %s: %w", h.url, err)
	}
	_, err := h.credential(ctx)
	return err
}

// stepUp logs in again for the scope a 403 insufficient_scope asks for.
func (h *Handler) stepUp(ctx context.Context, sent string, re *flows.ResourceError) error {
	required, ok := flows.RequiredScope(re)
	if !ok || h.opts.StepUp == nil {
		return fmt.Errorf("mcpsdk: %w", re)
	}
	h.mu.Lock()
	granted := h.last.Scope
	if h.last.Token != sent {
		h.mu.Unlock()
		return nil // replaced meanwhile, for another request
	}
	if h.stepUps >= h.opts.MaxStepUps {
		h.mu.Unlock()
		return &flows.StepUpError{Attempts: h.stepUps, Granted: granted, Refused: required}
	}
	h.stepUps++
	h.mu.Unlock()
	scope := oauthwire.UnionScopes(granted, required)
	if err := h.opts.StepUp(ctx, h.url, scope); err != nil {
		return fmt.Errorf("logging in to %s for scope %q: %w", h.url, scope, err)
	}
	_, err := h.credential(ctx)
	return err
}
