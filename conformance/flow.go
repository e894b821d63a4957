package conformance

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/mcpauth/mcpauth/pkce"
)

// Redirect URIs the suite registers. Nothing needs to listen on them: the
// approver stops at the redirect and hands the URL back.
const (
	loopbackRedirect = "http://127.0.0.1:43117/callback"
	httpsRedirect    = "https://client.example.com/callback"
	grantDeviceCode  = "urn:ietf:params:oauth:grant-type:device_code"
)

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// register posts client metadata to /oauth/register.
func (e *Env) register(ctx context.Context, meta map[string]any) (*Response, error) {
	return e.PostJSON(ctx, "/oauth/register", meta)
}

// registerClient registers a client and returns its client_id.
func (e *Env) registerClient(ctx context.Context, meta map[string]any) (string, error) {
	r, err := e.register(ctx, meta)
	if err != nil {
		return "", err
	}
	if r.Status != 201 && r.Status != 200 {
		return "", fmt.Errorf("registering a client: want HTTP 201, got %s", r.Snippet())
	}
	o, err := decodeObject(r)
	if err != nil {
		return "", fmt.Errorf("registering a client: %w", err)
	}
	id, err := o.str("client_id")
	if err != nil || id == "" {
		return "", fmt.Errorf("registering a client: no client_id in %s", r.Snippet())
	}
	return id, nil
}

// client returns one of two clients registered once per run (which = 0 or 1),
// with both redirect URIs and both grants.
func (e *Env) client(ctx context.Context, which int) (string, error) {
	id, err := e.run.clients[which].get(ctx, func(ctx context.Context) (string, error) {
		return e.registerClient(ctx, map[string]any{
			"client_name":    fmt.Sprintf("mcpauth conformance %d", which),
			"redirect_uris":  []string{loopbackRedirect, httpsRedirect},
			"grant_types":    []string{"authorization_code", grantDeviceCode},
			"response_types": []string{"code"},
			"scope":          "mcp",
		})
	})
	if err != nil {
		return "", setupFail("registering the suite's client", err)
	}
	return id, nil
}

// authRequest is an authorization request and the secrets to finish it.
type authRequest struct {
	ClientID, RedirectURI, State, Verifier string
	Query                                  url.Values
}

func newAuthRequest(clientID, redirectURI string) *authRequest {
	v, err := pkce.NewVerifier()
	if err != nil {
		v = randomString(32) // same shape; NewVerifier only fails if crypto/rand does
	}
	a := &authRequest{ClientID: clientID, RedirectURI: redirectURI, State: randomString(12), Verifier: v}
	a.Query = url.Values{
		"response_type":         {"code"},
		"client_id":             {clientID},
		"redirect_uri":          {redirectURI},
		"scope":                 {"mcp"},
		"state":                 {a.State},
		"code_challenge":        {pkce.S256(v)},
		"code_challenge_method": {pkce.MethodS256},
	}
	return a
}

func (e *Env) authURL(a *authRequest) string {
	return e.URL("/oauth/authorize") + "?" + a.Query.Encode()
}

// grant is an authorization code ready to be exchanged.
type grant struct {
	*authRequest
	Code string
}

// consent runs the authorization request through the approver.
func (e *Env) consent(ctx context.Context, a *authRequest, approve bool) (*url.URL, error) {
	if e.target.Approver == nil {
		return nil, Skip("needs an approver")
	}
	var (
		u   *url.URL
		err error
	)
	if approve {
		u, err = e.target.Approver.ApproveConsent(ctx, e.authURL(a))
	} else {
		u, err = e.target.Approver.DenyConsent(ctx, e.authURL(a))
	}
	if err != nil {
		return nil, fmt.Errorf("approver: %w", err)
	}
	return u, nil
}

// authCode obtains a fresh authorization code for the suite's client.
func (e *Env) authCode(ctx context.Context) (*grant, error) {
	id, err := e.client(ctx, 0)
	if err != nil {
		return nil, err
	}
	a := newAuthRequest(id, loopbackRedirect)
	u, err := e.consent(ctx, a, true)
	if err != nil {
		return nil, setupFail("approving consent", err)
	}
	q := u.Query()
	if q.Get("code") == "" {
		return nil, setupFail("approving consent", fmt.Errorf("redirect carries no code: %s", u))
	}
	if q.Get("state") != a.State {
		return nil, setupFail("approving consent", fmt.Errorf("redirect state %q, want %q", q.Get("state"), a.State))
	}
	return &grant{authRequest: a, Code: q.Get("code")}, nil
}

// exchange posts the code to /oauth/token; edit may change the form first.
func (e *Env) exchange(ctx context.Context, g *grant, edit func(url.Values)) (*Response, error) {
	f := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {g.Code},
		"redirect_uri":  {g.RedirectURI},
		"client_id":     {g.ClientID},
		"code_verifier": {g.Verifier},
	}
	if edit != nil {
		edit(f)
	}
	return e.PostForm(ctx, "/oauth/token", f)
}

// freshToken runs the authorization code flow and returns a new access token.
func (e *Env) freshToken(ctx context.Context) (string, error) {
	g, err := e.authCode(ctx)
	if err != nil {
		return "", err
	}
	r, err := e.exchange(ctx, g, nil)
	if err != nil {
		return "", setupFail("exchanging the code", err)
	}
	tok, err := accessToken(r)
	if err != nil {
		return "", setupFail("exchanging the code", err)
	}
	return tok, nil
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
		k, err := e.target.Approver.APIKey(ctx)
		if err != nil {
			return "", setupFail("reading the API key from Settings", err)
		}
		return k, nil
	})
}

// deviceCode requests a device code for clientID and checks the answer is 200.
func (e *Env) deviceCode(ctx context.Context, clientID string) (*deviceAuthorization, error) {
	r, err := e.PostJSON(ctx, "/api/oauth/device/code", map[string]string{"client_id": clientID, "scope": "mcp"})
	if err != nil {
		return nil, setupFail("requesting a device code", err)
	}
	if r.Status != 200 {
		return nil, setupFail("requesting a device code", fmt.Errorf("want HTTP 200, got %s", r.Snippet()))
	}
	var d deviceAuthorization
	if err := r.JSON(&d); err != nil {
		return nil, setupFail("requesting a device code", err)
	}
	if d.DeviceCode == "" || d.UserCode == "" {
		return nil, setupFail("requesting a device code", fmt.Errorf("device_code or user_code empty: %s", r.Snippet()))
	}
	return &d, nil
}

// poll polls /api/oauth/device/token once with JSON, as the contract says.
func (e *Env) poll(ctx context.Context, clientID, deviceCode string) (*Response, error) {
	return e.PostJSON(ctx, "/api/oauth/device/token", map[string]string{
		"device_code": deviceCode,
		"client_id":   clientID,
		"grant_type":  grantDeviceCode,
	})
}

// deviceSetup registers (once) the suite's client and requests a device code.
func (e *Env) deviceSetup(ctx context.Context) (string, *deviceAuthorization, error) {
	id, err := e.client(ctx, 0)
	if err != nil {
		return "", nil, err
	}
	d, err := e.deviceCode(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return id, d, nil
}

// approveDevice approves (or denies) a user code through the approver.
func (e *Env) approveDevice(ctx context.Context, d *deviceAuthorization, code string, approve bool) error {
	if e.target.Approver == nil {
		return Skip("needs an approver")
	}
	uri := d.VerificationURI
	if uri == "" {
		uri = e.URL("/auth/device")
	}
	var err error
	if approve {
		err = e.target.Approver.ApproveDevice(ctx, uri, code)
	} else {
		err = e.target.Approver.DenyDevice(ctx, uri, code)
	}
	if err != nil {
		return setupFail("approving the device code", err)
	}
	return nil
}
