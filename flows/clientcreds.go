package flows

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
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
	// AssertionAudience is the aud of client assertions: AudienceIssuer
	// ("" too) or AudienceTokenEndpoint.
	AssertionAudience string
	Scope             string // "" means Discovery.Scope without offline_access
	NoResource        bool   // omit the RFC 8707 resource parameter
	// DPoP, when set, binds the token to its key: a proof goes with every
	// attempt and the answer must be token_type DPoP.
	DPoP *DPoP
}

// ClientCredentials runs the client credentials grant (RFC 6749 §4.4).
func ClientCredentials(ctx context.Context, cfg GrantConfig) (*Token, error) {
	return cfg.run(ctx, "client credentials grant", url.Values{"grant_type": {oauthwire.GrantTypeClientCredentials}})
}

func (cfg GrantConfig) run(ctx context.Context, name string, form url.Values) (*Token, error) {
	if cfg.Discovery == nil || cfg.Discovery.AuthServer == nil || cfg.Discovery.AuthServer.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s: no token endpoint in the authorization server metadata", name)
	}
	md := cfg.Discovery.AuthServer
	if scope := cmp.Or(cfg.Scope, oauthwire.MachineScope(cfg.Discovery.Scope)); scope != "" {
		form.Set("scope", scope)
	}
	if !cfg.NoResource {
		form.Set("resource", cfg.Discovery.Resource)
	}
	req := TokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: md.TokenEndpoint, Issuer: md.Issuer,
		Client: cfg.Client, Key: cfg.Key, AssertionAudience: cfg.AssertionAudience, DPoP: cfg.DPoP}
	tok, _, err := req.Do(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, md.TokenEndpoint, err)
	}
	return tok, nil
}
