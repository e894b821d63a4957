package flows

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// RFC 8693 token exchange, as the MCP enterprise-managed authorization
// extension uses it: the client trades the user's identity token at the
// enterprise IdP for an Identity Assertion JWT Authorization Grant (ID-JAG,
// draft-ietf-oauth-identity-assertion-authz-grant) addressed to the MCP
// server's authorization server, then redeems that with the JWT bearer
// grant (JWTBearer).

// TokenExchangeConfig configures one RFC 8693 exchange.
type TokenExchangeConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock
	// TokenEndpoint is where the exchange happens (the IdP's).
	TokenEndpoint string
	// Client is the client's identity at that endpoint; Key signs its
	// assertions for private_key_jwt (aud: the token endpoint).
	Client Client
	Key    *Signer

	SubjectToken       string
	SubjectTokenType   string // default oauthwire.TokenTypeIDToken
	RequestedTokenType string // default oauthwire.TokenTypeIDJAG
	Audience           string // the issuer of the server the token is for
	Resource           string // RFC 8707 resource
	Scope              string
}

// ExchangedToken is an RFC 8693 §2.2.1 response.
type ExchangedToken struct {
	Token
	IssuedTokenType string `json:"issued_token_type"`
}

// TokenExchange runs the exchange and checks that the server issued the
// requested type.
func TokenExchange(ctx context.Context, cfg TokenExchangeConfig) (*ExchangedToken, error) {
	const name = "token exchange"
	if cfg.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s: no token endpoint", name)
	}
	if err := oauthwire.CheckSecure("token exchange endpoint", cfg.TokenEndpoint, false); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	subject := strings.TrimSpace(cfg.SubjectToken)
	if subject == "" {
		return nil, fmt.Errorf("%s: the subject token is empty", name)
	}
	form := url.Values{
		"grant_type":           {oauthwire.GrantTypeTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {cmp.Or(cfg.SubjectTokenType, oauthwire.TokenTypeIDToken)},
		"requested_token_type": {cmp.Or(cfg.RequestedTokenType, oauthwire.TokenTypeIDJAG)},
	}
	for k, v := range map[string]string{"audience": cfg.Audience, "resource": cfg.Resource, "scope": cfg.Scope} {
		if v != "" {
			form.Set(k, v)
		}
	}
	// The IdP's issuer is not known here: its assertions name its token
	// endpoint.
	req := TokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: cfg.TokenEndpoint,
		Client: cfg.Client, Key: cfg.Key, AssertionAudience: AudienceTokenEndpoint}
	tok, body, err := req.Do(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, cfg.TokenEndpoint, err)
	}
	var extra struct {
		IssuedTokenType string `json:"issued_token_type"`
	}
	_ = json.Unmarshal(body, &extra) // a form-encoded answer leaves it empty, caught below
	want := form.Get("requested_token_type")
	if extra.IssuedTokenType != want {
		return nil, fmt.Errorf("%s at %s: issued_token_type is %q, asked for %q", name, cfg.TokenEndpoint, extra.IssuedTokenType, want)
	}
	return &ExchangedToken{Token: *tok, IssuedTokenType: extra.IssuedTokenType}, nil
}

// EnterpriseConfig configures the enterprise-managed authorization flow.
type EnterpriseConfig struct {
	// IdP is the exchange at the enterprise IdP: TokenEndpoint, Client, Key
	// and SubjectToken (the user's ID token) are needed; the audience,
	// resource and scope default from the grant's discovery.
	IdP TokenExchangeConfig
	// Grant is the JWT bearer grant at the MCP server's authorization server.
	Grant GrantConfig
}

// Enterprise exchanges the identity token for an ID-JAG at the IdP and the
// ID-JAG for an access token at the MCP server's authorization server.
func Enterprise(ctx context.Context, cfg EnterpriseConfig) (*Token, error) {
	disc := cfg.Grant.Discovery
	if disc == nil || disc.AuthServer == nil {
		return nil, errors.New("enterprise authorization: no authorization server metadata")
	}
	x := cfg.IdP
	x.HTTPClient = firstClient(x.HTTPClient, cfg.Grant.HTTPClient)
	if x.Clock == nil {
		x.Clock = cfg.Grant.Clock
	}
	x.RequestedTokenType = oauthwire.TokenTypeIDJAG
	x.Audience = cmp.Or(x.Audience, disc.Issuer)
	if !cfg.Grant.NoResource {
		x.Resource = cmp.Or(x.Resource, disc.Resource)
	}
	x.Scope = cmp.Or(x.Scope, cfg.Grant.Scope, disc.Scope)
	jag, err := TokenExchange(ctx, x)
	if err != nil {
		return nil, fmt.Errorf("enterprise authorization, step 1 (ID-JAG from the IdP): %w", err)
	}
	tok, err := JWTBearer(ctx, cfg.Grant, jag.AccessToken)
	if err != nil {
		return nil, fmt.Errorf("enterprise authorization, step 2 (ID-JAG for an access token): %w", err)
	}
	return tok, nil
}

func firstClient(cs ...*http.Client) *http.Client {
	for _, c := range cs {
		if c != nil {
			return c
		}
	}
	return nil
}
