package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Every grant — authorization code, device code, refresh, client
// credentials, JWT bearer, token exchange — sends its token request through
// TokenRequest.Do, so client authentication, DPoP and the resource
// parameter work the same under each. golang.org/x/oauth2's token sources
// are not used for it: each attempt needs a fresh client assertion (a new
// jti) and a fresh DPoP proof, a use_dpop_nonce answer is retried with the
// server's nonce, and the refresh grant needs the RFC 8707 resource, none
// of which the library's one-shot requests can do.

// Assertion audiences (private_key_jwt, RFC 7523 §3): the issuer
// identifier by default, as the update of RFC 7523 (rfc7523bis, written
// after the audience-injection attacks) and the MCP client-credentials
// extension require; the token endpoint URL for servers that still want it.
const (
	AudienceIssuer        = "issuer"
	AudienceTokenEndpoint = "token-endpoint"
)

// TokenRequest is one client-authenticated request to a token endpoint.
type TokenRequest struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock
	Endpoint   string       // the token endpoint
	// Issuer is the authorization server's issuer, the default aud of a
	// client assertion ("" falls back to Endpoint).
	Issuer string
	Client Client
	Key    *Signer // private_key_jwt
	// AssertionAudience picks the assertion's aud: AudienceIssuer ("" too)
	// or AudienceTokenEndpoint.
	AssertionAudience string
	// DPoP, when set, sends a proof with every attempt, retries once on
	// use_dpop_nonce, and refuses an answer that is not token_type DPoP.
	DPoP *DPoP
	// JSON sends the form as a JSON object (the reference contract's device
	// poll dialect) instead of application/x-www-form-urlencoded.
	JSON bool
}

// maxNonceRetries bounds use_dpop_nonce retries (RFC 9449 §8 expects one).
const maxNonceRetries = 1

// Do sends form (grant_type and the grant's parameters; an empty
// "resource" is dropped) and parses the token response. It retries once
// when the server answers use_dpop_nonce with a DPoP-Nonce header, with a
// new proof and a new client assertion. The body is returned for fields
// Token lacks. The request goes to Endpoint's origin only (Confine).
func (r TokenRequest) Do(ctx context.Context, form url.Values) (*Token, []byte, error) {
	if form.Get("resource") == "" {
		form.Del("resource")
	}
	for attempt := 0; ; attempt++ {
		resp, body, err := r.post(ctx, form)
		if err != nil {
			return nil, nil, err
		}
		if r.DPoP != nil {
			r.DPoP.SetNonce(r.Endpoint, resp.Header.Get("DPoP-Nonce"))
		}
		tok, err := parseToken(resp, body, clockOr(r.Clock).Now())
		if r.DPoP != nil && IsCode(err, "use_dpop_nonce") {
			if resp.Header.Get("DPoP-Nonce") == "" {
				return nil, nil, fmt.Errorf("%w (and sent no DPoP-Nonce header)", err)
			}
			if attempt >= maxNonceRetries {
				return nil, nil, fmt.Errorf("%w: %w", ErrDPoPNonceLoop, err)
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if r.DPoP != nil && !strings.EqualFold(tok.TokenType, TokenTypeDPoP) {
			return nil, nil, fmt.Errorf("%w (token_type %q)", ErrNotDPoPBound, tok.TokenType)
		}
		if r.DPoP == nil && strings.EqualFold(tok.TokenType, TokenTypeDPoP) {
			return nil, nil, ErrUnrequestedDPoP
		}
		return tok, body, nil
	}
}

// audience is the aud of a client assertion.
func (r TokenRequest) audience() (string, error) {
	switch r.AssertionAudience {
	case "", AudienceIssuer:
		if r.Issuer != "" {
			return r.Issuer, nil
		}
		return r.Endpoint, nil
	case AudienceTokenEndpoint:
		return r.Endpoint, nil
	}
	return "", fmt.Errorf("assertion audience %q is neither %s nor %s", r.AssertionAudience, AudienceIssuer, AudienceTokenEndpoint)
}

// authenticate returns form with the client's credentials (RFC 6749
// §2.3.1, RFC 7523 §2.2), and whether they go in a Basic header instead.
func (r TokenRequest) authenticate(form url.Values) (url.Values, bool, error) {
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	c := r.Client
	if c.ID == "" && c.AuthMethod != AuthMethodNone && c.AuthMethod != "" {
		return nil, false, errors.New("no client ID")
	}
	switch c.AuthMethod {
	case AuthMethodBasic:
		if c.Secret == "" {
			return nil, false, errors.New("client_secret_basic needs a client secret")
		}
		return out, true, nil
	case AuthMethodPost:
		if c.Secret == "" {
			return nil, false, errors.New("client_secret_post needs a client secret")
		}
		out.Set("client_id", c.ID)
		out.Set("client_secret", c.Secret)
	case AuthMethodPrivateKeyJWT:
		if r.Key == nil {
			return nil, false, errors.New("private_key_jwt needs a private key")
		}
		aud, err := r.audience()
		if err != nil {
			return nil, false, err
		}
		a, err := r.Key.ClientAssertion(c.ID, aud, clockOr(r.Clock).Now())
		if err != nil {
			return nil, false, err
		}
		out.Set("client_id", c.ID)
		out.Set("client_assertion_type", ClientAssertionType)
		out.Set("client_assertion", a)
	case AuthMethodNone, "":
		if c.ID != "" {
			out.Set("client_id", c.ID)
		}
	default:
		return nil, false, fmt.Errorf("token endpoint auth method %q is not supported", c.AuthMethod)
	}
	return out, false, nil
}

func (r TokenRequest) post(ctx context.Context, form url.Values) (*http.Response, []byte, error) {
	out, basic, err := r.authenticate(form)
	if err != nil {
		return nil, nil, err
	}
	body, contentType := out.Encode(), "application/x-www-form-urlencoded"
	if r.JSON {
		obj := map[string]string{}
		for k := range out {
			obj[k] = out.Get(k)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, nil, err
		}
		body, contentType = string(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Endpoint, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(r.Client.ID), url.QueryEscape(r.Client.Secret)) // RFC 6749 §2.3.1
	}
	if r.DPoP != nil {
		p, err := r.DPoP.Proof(http.MethodPost, r.Endpoint, "")
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("DPoP", p)
	}
	return doConfined(r.HTTPClient, req)
}
