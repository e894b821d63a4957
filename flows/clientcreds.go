package flows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The machine grants (client credentials, JWT bearer, token exchange) share
// one hand-written token request rather than golang.org/x/oauth2: each
// attempt needs a fresh client assertion (a new jti) and a fresh DPoP proof,
// and a use_dpop_nonce answer is retried with the server's nonce, none of
// which the library's one-shot token sources can do.

// GrantTypeClientCredentials is the RFC 6749 §4.4 grant type.
const GrantTypeClientCredentials = "client_credentials"

// Assertion audiences: RFC 7523 §3 lets the token endpoint URL identify the
// authorization server, which most servers expect; the draft that updates
// it (rfc7523bis) asks for the issuer identifier instead.
const (
	AudienceTokenEndpoint = "token-endpoint"
	AudienceIssuer        = "issuer"
)

// GrantConfig configures a grant at the authorization server's token
// endpoint on behalf of the client itself (no user at a browser).
type GrantConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock
	Discovery  *Discovery
	// Client authenticates with Client.AuthMethod: client_secret_basic or
	// client_secret_post with Client.Secret, private_key_jwt with Key, or
	// none (client_id in the body).
	Client Client
	Key    *Signer
	// AssertionAudience is the aud of client assertions: AudienceTokenEndpoint
	// ("" too) or AudienceIssuer.
	AssertionAudience string
	Scope             string // "" means Discovery.Scope
	NoResource        bool   // omit the RFC 8707 resource parameter
	// DPoP, when set, binds the token to its key: a proof goes with every
	// attempt and the answer must be token_type DPoP.
	DPoP *DPoP
}

// ClientCredentials runs the client credentials grant (RFC 6749 §4.4).
func ClientCredentials(ctx context.Context, cfg GrantConfig) (*Token, error) {
	return cfg.run(ctx, "client credentials grant", url.Values{"grant_type": {GrantTypeClientCredentials}})
}

func (cfg GrantConfig) run(ctx context.Context, name string, form url.Values) (*Token, error) {
	if cfg.Discovery == nil || cfg.Discovery.AuthServer == nil || cfg.Discovery.AuthServer.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s: no token endpoint in the authorization server metadata", name)
	}
	md := cfg.Discovery.AuthServer
	if scope := firstNonEmpty(cfg.Scope, cfg.Discovery.Scope); scope != "" {
		form.Set("scope", scope)
	}
	if !cfg.NoResource && cfg.Discovery.Resource != "" {
		form.Set("resource", cfg.Discovery.Resource)
	}
	aud := md.TokenEndpoint
	switch cfg.AssertionAudience {
	case "", AudienceTokenEndpoint:
	case AudienceIssuer:
		aud = md.Issuer
	default:
		return nil, fmt.Errorf("%s: assertion audience %q is neither %s nor %s", name, cfg.AssertionAudience, AudienceTokenEndpoint, AudienceIssuer)
	}
	req := tokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: md.TokenEndpoint,
		Client: cfg.Client, Key: cfg.Key, Audience: aud, DPoP: cfg.DPoP}
	tok, _, err := req.do(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, md.TokenEndpoint, err)
	}
	return tok, nil
}

// tokenRequest is one client-authenticated POST to a token endpoint.
type tokenRequest struct {
	HTTPClient *http.Client
	Clock      Clock
	Endpoint   string
	Client     Client
	Key        *Signer // private_key_jwt
	Audience   string  // aud of the client assertion
	DPoP       *DPoP
}

// maxNonceRetries bounds use_dpop_nonce retries (RFC 9449 §8 expects one).
const maxNonceRetries = 1

// do posts form and parses the token response. It retries once when the
// server answers use_dpop_nonce with a DPoP-Nonce header, with a new proof
// and a new client assertion. The body is returned for fields Token lacks.
func (r tokenRequest) do(ctx context.Context, form url.Values) (*Token, []byte, error) {
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
		return tok, body, nil
	}
}

func (r tokenRequest) post(ctx context.Context, form url.Values) (*http.Response, []byte, error) {
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	c := r.Client
	if c.ID == "" && c.AuthMethod != AuthMethodNone {
		return nil, nil, errors.New("no client ID")
	}
	switch c.AuthMethod {
	case AuthMethodBasic:
		if c.Secret == "" {
			return nil, nil, errors.New("client_secret_basic needs a client secret")
		}
	case AuthMethodPost:
		if c.Secret == "" {
			return nil, nil, errors.New("client_secret_post needs a client secret")
		}
		out.Set("client_id", c.ID)
		out.Set("client_secret", c.Secret)
	case AuthMethodPrivateKeyJWT:
		if r.Key == nil {
			return nil, nil, errors.New("private_key_jwt needs a private key")
		}
		a, err := r.Key.ClientAssertion(c.ID, r.Audience, clockOr(r.Clock).Now())
		if err != nil {
			return nil, nil, err
		}
		out.Set("client_id", c.ID)
		out.Set("client_assertion_type", ClientAssertionType)
		out.Set("client_assertion", a)
	case AuthMethodNone, "":
		if c.ID != "" {
			out.Set("client_id", c.ID)
		}
	default:
		return nil, nil, fmt.Errorf("token endpoint auth method %q is not supported", c.AuthMethod)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Endpoint, strings.NewReader(out.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == AuthMethodBasic {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret)) // RFC 6749 §2.3.1
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

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
