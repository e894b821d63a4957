package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Machine logins (client credentials, JWT bearer, enterprise ID-JAG) have
// no refresh token and no user: when the token expires, token and ping run
// the grant again from what the bundle keeps (keyring.GrantInfo).

// RenewSkew renews a machine token this long before it expires, so the
// token printed by `mcpauth token` is still good when a script uses it.
const RenewSkew = 30 * time.Second

// MachineGrant runs the grant b.Grant describes for b's resource and
// issuer, with b's client, binding the token to b.DPoPKey when set. It
// returns the token and the DPoP key (nil for Bearer). Files are read
// afresh: a rotated key or a refreshed workload token is picked up. Local
// problems (unreadable files, bad keys) are usage errors (exit 2).
func (f *Factory) MachineGrant(ctx context.Context, b keyring.TokenBundle) (*flows.Token, *flows.DPoP, error) {
	g := b.Grant
	if g == nil {
		return nil, nil, errors.New("no machine grant stored")
	}
	if err := CheckGrantFiles(g); err != nil {
		return nil, nil, err
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return nil, nil, err
	}
	disc := &flows.Discovery{Resource: b.Resource, Issuer: b.Issuer, Scope: g.Scope,
		AuthServer: &flows.AuthServerMetadata{Issuer: b.Issuer, TokenEndpoint: g.TokenEndpoint}}
	cfg := flows.GrantConfig{HTTPClient: hc, Clock: f.Clock, Discovery: disc, Scope: g.Scope,
		NoResource: g.NoResource, AssertionAudience: g.AssertionAudience, Client: clientOf(b.Client)}
	if cfg.Client.AuthMethod == flows.AuthMethodPrivateKeyJWT {
		if cfg.Key, err = flows.LoadSigner(g.PrivateKeyFile, g.SigningAlg); err != nil {
			return nil, nil, WithExit(ExitUsage, err)
		}
		cfg.Key.KeyID = g.KeyID
	}
	if b.DPoPKey != "" {
		if cfg.DPoP, err = flows.ParseDPoPKey(b.DPoPKey, f.Clock); err != nil {
			return nil, nil, WithExit(ExitStorage, err)
		}
	}
	var tok *flows.Token
	switch g.Type {
	case keyring.GrantClientCredentials:
		tok, err = flows.ClientCredentials(ctx, cfg)
	case keyring.GrantJWTBearer:
		var assertion string
		if assertion, err = f.readSecret(g.AssertionFile, g.AssertionEnv, "JWT bearer assertion"); err != nil {
			return nil, nil, err
		}
		tok, err = flows.JWTBearer(ctx, cfg, assertion)
	case keyring.GrantEnterprise:
		var idToken string
		if idToken, err = f.readSecret(g.IDTokenFile, "", "ID token"); err != nil {
			return nil, nil, err
		}
		tok, err = flows.Enterprise(ctx, flows.EnterpriseConfig{Grant: cfg, IdP: flows.TokenExchangeConfig{
			TokenEndpoint: g.IdPTokenEndpoint, Client: clientOf(g.IdPClient), SubjectToken: idToken}})
	default:
		return nil, nil, fmt.Errorf("unknown machine grant %q", g.Type)
	}
	if err != nil {
		return nil, nil, err
	}
	return tok, cfg.DPoP, nil
}

// CheckGrantFiles refuses g's key, assertion and ID token files when group
// or others may access them (CheckPrivateFile), unless login was told to
// allow it. At login and at every renewal: a key may be loosened later.
func CheckGrantFiles(g *keyring.GrantInfo) error {
	for _, f := range []struct{ flag, path string }{
		{"--private-key-file", g.PrivateKeyFile}, {"--jwt-bearer-assertion-file", g.AssertionFile}, {"--id-token-file", g.IDTokenFile},
	} {
		if err := CheckPrivateFile(f.flag, f.path, g.AllowInsecureKeyFile); err != nil {
			return err
		}
	}
	return nil
}

// readSecret reads an assertion or token from file, else from the
// environment variable env.
func (f *Factory) readSecret(file, env, what string) (string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", WithExit(ExitUsage, fmt.Errorf("reading the %s: %w", what, err))
		}
		if s := strings.TrimSpace(string(data)); s != "" {
			return s, nil
		}
		return "", WithExit(ExitUsage, fmt.Errorf("the %s file %s is empty", what, file))
	}
	if env != "" {
		if s := strings.TrimSpace(f.Getenv(env)); s != "" {
			return s, nil
		}
		return "", WithExit(ExitUsage, fmt.Errorf("%s is empty: no %s", env, what))
	}
	return "", WithExit(ExitUsage, fmt.Errorf("no %s given", what))
}

func clientOf(ci *keyring.ClientInfo) flows.Client {
	if ci == nil {
		return flows.Client{AuthMethod: flows.AuthMethodNone}
	}
	return flows.Client{ID: ci.ClientID, Secret: ci.ClientSecret, AuthMethod: ci.TokenEndpointAuthMethod}
}

// FillToken puts a token response (and the DPoP key it is bound to, nil
// for Bearer) into b: the one mapping from a token response to what is
// stored, for logins, renewals and refreshes. A response without scope
// keeps the scope b had (RFC 6749 §5.1: the same as before), and a refresh
// token's expiry changes with the refresh token or when the server says.
func FillToken(b *keyring.TokenBundle, tok *flows.Token, d *flows.DPoP) error {
	b.Kind = keyring.KindOAuth
	if !tok.RefreshExpiry.IsZero() || tok.RefreshToken != b.RefreshToken {
		b.RefreshExpiry = tok.RefreshExpiry
	}
	b.AccessToken, b.TokenType, b.RefreshToken, b.Expiry = tok.AccessToken, tok.TokenType, tok.RefreshToken, tok.Expiry
	if tok.Scope != "" {
		b.Scope = tok.Scope
	}
	b.DPoPKey = ""
	if d != nil {
		k, err := d.MarshalKey()
		if err != nil {
			return err
		}
		b.DPoPKey = k
	}
	return nil
}

// renewMachine runs a stored machine grant again and stores the new token.
// Any failure is "auth required" (exit 3) unless it carries its own code,
// and names the grant and the server's answer.
func (f *Factory) renewMachine(st *keyring.Store, e keyring.EntryInfo, b keyring.TokenBundle) (keyring.TokenBundle, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tok, d, err := f.MachineGrant(ctx, b)
	if err != nil {
		code := CodeFor(err)
		if code == ExitFailure {
			code = ExitAuthRequired
		}
		return b, WithExit(code, fmt.Errorf("renewing the token for %s: %w (run: mcpauth login %s with the same options)", e.Server, err, e.Server))
	}
	if err := FillToken(&b, tok, d); err != nil {
		return b, err
	}
	if err := st.Save(e.Server, e.Account, b); err != nil {
		return b, WithExit(ExitStorage, fmt.Errorf("storing the renewed token: %w", err))
	}
	return b, nil
}

// machineExpired reports whether a machine token should be renewed.
func (f *Factory) machineExpired(b keyring.TokenBundle) bool {
	return b.Grant != nil && (b.AccessToken == "" || !b.Expiry.IsZero() && !f.Clock.Now().Before(b.Expiry.Add(-RenewSkew)))
}

// dpopOf restores a bundle's DPoP key (nil when the token is a Bearer).
func (f *Factory) dpopOf(b keyring.TokenBundle) (*flows.DPoP, error) {
	if b.DPoPKey == "" || !strings.EqualFold(b.TokenType, flows.TokenTypeDPoP) {
		return nil, nil
	}
	d, err := flows.ParseDPoPKey(b.DPoPKey, f.Clock)
	if err != nil {
		return nil, WithExit(ExitStorage, fmt.Errorf("the stored DPoP key: %w", err))
	}
	return d, nil
}
