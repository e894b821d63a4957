package conformance

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/mcpauth/mcpauth/flows"
)

// The suite's happy paths (registering its clients, authorize and exchange,
// requesting and polling device codes) run through package flows, the client
// the CLI is, so the server is judged on what a real client sends; checks
// read the server's answers from the wire recorder (Env.wire). Raw requests
// remain where a check sends what a correct client never would.

// Redirect URIs the suite registers. Nothing needs to listen on them: the
// approver stops at the redirect and hands the URL back.
const (
	loopbackRedirect = "http://127.0.0.1:43117/callback"
	httpsRedirect    = "https://client.example.com/callback"
)

// RedirectURI is the redirect URI the suite's flows use (with an approver
// that has no listener of its own): a pre-registered client must allow it.
const RedirectURI = loopbackRedirect

// redirectURI is the redirect URI the mcp profile's client registers: the
// approver's own listener when it has one, else the fixed loopback URI
// nothing listens on (the approver stops at the redirect).
func (e *Env) redirectURI() string {
	if r, ok := e.target.Approver.(interface{ RedirectURI() string }); ok {
		return r.RedirectURI()
	}
	return loopbackRedirect
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// contract is the target as the contract lays it out. The happy paths do not
// discover it: discovery is what the DISC checks judge.
func (e *Env) contract() *flows.Discovery {
	return &flows.Discovery{Resource: e.URL("/mcp"), Issuer: e.base, Scope: "mcp", AuthServer: &flows.AuthServerMetadata{
		Issuer:                      e.base,
		AuthorizationEndpoint:       e.URL("/oauth/authorize"),
		TokenEndpoint:               e.URL("/oauth/token"),
		RegistrationEndpoint:        e.URL("/oauth/register"),
		DeviceAuthorizationEndpoint: e.URL("/api/oauth/device/code"),
	}}
}

// register posts client metadata to /oauth/register, raw, for the checks of
// the registration endpoint.
func (e *Env) register(ctx context.Context, meta map[string]any) (*Response, error) {
	return e.PostJSON(ctx, "/oauth/register", meta)
}

// registerClient registers a public client and returns its client_id.
func (e *Env) registerClient(ctx context.Context, md flows.ClientMetadata) (string, error) {
	hc, _ := e.wire()
	md.TokenEndpointAuthMethod = flows.AuthMethodNone
	ci, err := flows.Register(ctx, hc, e.URL("/oauth/register"), md)
	if err != nil {
		return "", fmt.Errorf("registering a client: %w", err)
	}
	return ci.ClientID, nil
}

// client returns one of two clients registered once per run (which = 0 or 1),
// with both redirect URIs and both grants.
func (e *Env) client(ctx context.Context, which int) (string, error) {
	id, err := e.run.clients[which].get(ctx, func(ctx context.Context) (string, error) {
		return e.registerClient(ctx, flows.ClientMetadata{
			ClientName:    fmt.Sprintf("mcpauth conformance %d", which),
			RedirectURIs:  []string{loopbackRedirect, httpsRedirect},
			GrantTypes:    []string{"authorization_code", flows.GrantTypeDeviceCode},
			ResponseTypes: []string{"code"},
			Scope:         "mcp",
		})
	})
	if err != nil {
		return "", setupFail("registering the suite's client", err)
	}
	return id, nil
}

// authConfig is the authorization code flow of public client clientID.
func (e *Env) authConfig(clientID string) flows.AuthCodeConfig {
	hc, _ := e.wire()
	return flows.AuthCodeConfig{HTTPClient: hc, Discovery: e.contract(), Scope: "mcp",
		Client: flows.Client{ID: clientID, AuthMethod: flows.AuthMethodNone}}
}

// authRequest is a good authorization request, as flows builds it, and its
// parameters for the checks that edit them.
type authRequest struct {
	*flows.AuthRequest
	Query url.Values
}

func (e *Env) newAuthRequest(clientID, redirectURI string) (*authRequest, error) {
	r, err := e.authConfig(clientID).NewRequest(redirectURI)
	if err != nil {
		return nil, setupFail("building an authorization request", err)
	}
	u, err := url.Parse(r.URL())
	if err != nil {
		return nil, setupFail("building an authorization request", err)
	}
	return &authRequest{AuthRequest: r, Query: u.Query()}, nil
}

// suiteRequest is a good authorization request of the suite's client.
func (e *Env) suiteRequest(ctx context.Context, redirectURI string) (*authRequest, error) {
	cid, err := e.client(ctx, 0)
	if err != nil {
		return nil, err
	}
	return e.newAuthRequest(cid, redirectURI)
}

// consentRedirect runs a good authorization request of the suite's client
// through the approver, approving or denying it, and returns the request and
// the redirect, unchecked, for the checks of the authorization endpoint.
func (e *Env) consentRedirect(ctx context.Context, approve bool) (*authRequest, *url.URL, error) {
	a, err := e.suiteRequest(ctx, loopbackRedirect)
	if err != nil {
		return nil, nil, err
	}
	u, err := e.consent(ctx, a, approve)
	if err != nil {
		verb := "denying"
		if approve {
			verb = "approving"
		}
		return nil, nil, Fail("%s: %v", verb, err)
	}
	return a, u, nil
}

// consent sends a through the approver's consent screen.
func (e *Env) consent(ctx context.Context, a *authRequest, approve bool) (*url.URL, error) {
	if e.target.Approver == nil {
		return nil, Skip("needs an approver")
	}
	send := e.approver().DenyConsent
	if approve {
		send = e.approver().ApproveConsent
	}
	u, err := send(ctx, a.URL())
	if err != nil {
		return nil, fmt.Errorf("approver: %w", err)
	}
	return u, nil
}

// grant is an authorization code ready to be exchanged.
type grant struct {
	cfg  flows.AuthCodeConfig
	req  *flows.AuthRequest
	Code string
}

// authCode obtains a fresh authorization code for the suite's client: flows'
// front channel with the approver in place of the browser.
func (e *Env) authCode(ctx context.Context) (*grant, error) {
	id, err := e.client(ctx, 0)
	if err != nil {
		return nil, err
	}
	return e.codeFor(ctx, id, "mcp")
}

// exchange redeems the grant through flows and returns the server's answer as
// it came, for the check to judge.
func (e *Env) exchange(ctx context.Context, g *grant) (*Response, error) {
	cfg := g.cfg
	hc, rec := e.wire()
	cfg.HTTPClient = hc
	_, err := cfg.Exchange(ctx, g.req, g.Code)
	return rec.answer(err)
}

// freshExchange obtains a fresh code and redeems it through flows,
// returning the grant (to replay it) and the server's answer.
func (e *Env) freshExchange(ctx context.Context) (*grant, *Response, error) {
	g, err := e.authCode(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, err := e.exchange(ctx, g)
	return g, r, err
}

// exchangedOnce obtains a fresh code and redeems it, wanting a token, for
// the checks that then replay the code: the grant and the access token.
func (e *Env) exchangedOnce(ctx context.Context) (*grant, string, error) {
	g, err := e.authCode(ctx)
	if err != nil {
		return nil, "", err
	}
	tok, err := e.redeemOnce(ctx, g, "first exchange")
	return g, tok, err
}

// redeemOnce redeems g through flows and returns the access token issued; a
// refusal fails the setup, step naming the exchange.
func (e *Env) redeemOnce(ctx context.Context, g *grant, step string) (string, error) {
	r, err := e.exchange(ctx, g)
	if err != nil {
		return "", err
	}
	tok, err := accessToken(r)
	if err != nil {
		return "", setupFail(step, err)
	}
	return tok, nil
}

// exchangeForm is the form flows sends to redeem g, for checks that break it.
func (g *grant) exchangeForm() url.Values {
	return url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {g.Code},
		"redirect_uri":  {g.req.RedirectURI},
		"client_id":     {g.cfg.Client.ID},
		"code_verifier": {g.req.Verifier},
		"resource":      {g.req.Resource},
	}
}

// freshToken runs the authorization code flow and returns a new access token.
func (e *Env) freshToken(ctx context.Context) (string, error) {
	g, err := e.authCode(ctx)
	if err != nil {
		return "", err
	}
	tok, err := g.cfg.Exchange(ctx, g.req, g.Code)
	if err != nil {
		return "", setupFail("exchanging the code", err)
	}
	return tok.AccessToken, nil
}

// token returns an access token obtained once per run. Checks that revoke or
// outlive their token use freshToken instead.
func (e *Env) token(ctx context.Context) (string, error) {
	return e.run.token.get(ctx, e.freshToken)
}

// apiKey returns the test user's API key.
func (e *Env) apiKey(ctx context.Context) (string, error) {
	return e.run.apiKey.get(ctx, func(ctx context.Context) (string, error) {
		if e.target.APIKey != "" {
			return e.target.APIKey, nil
		}
		if e.target.Approver == nil {
			return "", Skip("no API key (give one, or an approver that can read Settings)")
		}
		k, err := e.approver().APIKey(ctx)
		if err != nil {
			return "", setupFail("reading the API key from Settings", err)
		}
		return k, nil
	})
}

// deviceConfig is the contract's device flow (JSON dialect) for clientID.
func (e *Env) deviceConfig(clientID string) (flows.DeviceConfig, *recorder) {
	hc, rec := e.wire()
	return flows.DeviceConfig{HTTPClient: hc, Discovery: e.contract(), Scope: "mcp", Dialect: flows.DialectJSON,
		Client: flows.Client{ID: clientID, AuthMethod: flows.AuthMethodNone}}, rec
}

// deviceSetup registers (once) the suite's client and requests a device code.
func (e *Env) deviceSetup(ctx context.Context) (string, *flows.DeviceAuthorization, error) {
	id, err := e.client(ctx, 0)
	if err != nil {
		return "", nil, err
	}
	cfg, _ := e.deviceConfig(id)
	d, err := cfg.Authorize(ctx)
	if err != nil {
		return "", nil, setupFail("requesting a device code", err)
	}
	return id, d, nil
}

// poll polls once, at once, as flows does, and returns the server's answer.
func (e *Env) poll(ctx context.Context, clientID string, d *flows.DeviceAuthorization) (*Response, error) {
	cfg, rec := e.deviceConfig(clientID)
	_, _, err := cfg.PollOnce(ctx, d, 0)
	return rec.answer(err)
}

// approveDevice approves (or denies) a user code through the approver.
func (e *Env) approveDevice(ctx context.Context, d *flows.DeviceAuthorization, code string, approve bool) error {
	if e.target.Approver == nil {
		return Skip("needs an approver")
	}
	send := e.approver().DenyDevice
	if approve {
		send = e.approver().ApproveDevice
	}
	if err := send(ctx, d.VerificationURI, code); err != nil {
		return setupFail("approving the device code", err)
	}
	return nil
}
