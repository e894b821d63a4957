package creds

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/keyfile"
)

// Machine logins (client credentials, JWT bearer, enterprise ID-JAG) have
// no refresh token and no user: when the token expires, the grant is run
// again from what the bundle keeps (GrantInfo).

// RenewSkew renews a machine token this long before it expires, so the
// token printed by `mcpauth token` is still good when a script uses it.
const RenewSkew = 30 * time.Second

// renewTimeout bounds one renewal: a grant is one or two token requests.
const renewTimeout = 2 * time.Minute

// MachineGrant runs the grant b.Grant describes for b's resource and
// issuer, with b's client, binding the token to b.DPoPKey when set. It
// returns the token and the DPoP key (nil for Bearer). Files are read
// afresh: a rotated key or a refreshed workload token is picked up. Local
// problems (unreadable files, bad keys) are ErrInput.
func (k *Keeper) MachineGrant(ctx context.Context, b Bundle) (*flows.Token, *flows.DPoP, error) {
	g := b.Grant
	if g == nil {
		return nil, nil, errors.New("no machine grant stored")
	}
	if err := CheckGrantFiles(g); err != nil {
		return nil, nil, err
	}
	hc, err := k.HTTPClient()
	if err != nil {
		return nil, nil, err
	}
	disc := &flows.Discovery{Resource: b.Resource, Issuer: b.Issuer, Scope: g.Scope,
		AuthServer: &flows.AuthServerMetadata{Issuer: b.Issuer, TokenEndpoint: g.TokenEndpoint}}
	cfg := flows.GrantConfig{HTTPClient: hc, Clock: k.Clock, Discovery: disc, Scope: g.Scope,
		NoResource: g.NoResource, AssertionAudience: g.AssertionAudience, Client: b.Client.flowsClient()}
	if cfg.Client.AuthMethod == flows.AuthMethodPrivateKeyJWT {
		if cfg.Key, err = flows.LoadSigner(g.PrivateKeyFile, g.SigningAlg); err != nil {
			return nil, nil, &kindError{kind: ErrInput, err: err}
		}
		cfg.Key.KeyID = g.KeyID
	}
	if b.DPoPKey != "" {
		if cfg.DPoP, err = flows.ParseDPoPKey(b.DPoPKey, k.Clock); err != nil {
			return nil, nil, kinded(ErrStorage, "the stored DPoP key: %w", err)
		}
	}
	var tok *flows.Token
	switch g.Type {
	case GrantClientCredentials:
		tok, err = flows.ClientCredentials(ctx, cfg)
	case GrantJWTBearer:
		var assertion string
		if assertion, err = k.readSecret(g.AssertionFile, g.AssertionEnv, "JWT bearer assertion"); err != nil {
			return nil, nil, err
		}
		tok, err = flows.JWTBearer(ctx, cfg, assertion)
	case GrantEnterprise:
		var idToken string
		if idToken, err = k.readSecret(g.IDTokenFile, "", "ID token"); err != nil {
			return nil, nil, err
		}
		tok, err = flows.Enterprise(ctx, flows.EnterpriseConfig{Grant: cfg, IdP: flows.TokenExchangeConfig{
			TokenEndpoint: g.IdPTokenEndpoint, Client: g.IdPClient.flowsClient(), SubjectToken: idToken}})
	default:
		return nil, nil, fmt.Errorf("unknown machine grant %q", g.Type)
	}
	if err != nil {
		return nil, nil, err
	}
	return tok, cfg.DPoP, nil
}

// CheckGrantFiles refuses g's key, assertion and ID token files when group
// or others may access them (a *keyfile.InsecureError, ErrInput), unless
// the login was told to allow it (GrantInfo.AllowInsecureKeyFile). At
// login and at every renewal: a key may be loosened later.
func CheckGrantFiles(g *GrantInfo) error {
	if g.AllowInsecureKeyFile {
		return nil
	}
	for _, f := range []struct{ what, path string }{
		{"private key file", g.PrivateKeyFile}, {"JWT bearer assertion file", g.AssertionFile}, {"ID token file", g.IDTokenFile},
	} {
		if err := keyfile.Check(f.path); err != nil {
			return kinded(ErrInput, "%s %w", f.what, err)
		}
	}
	return nil
}

// readSecret reads an assertion or token from file, else from the
// environment variable env.
func (k *Keeper) readSecret(file, env, what string) (string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", kinded(ErrInput, "reading the %s: %w", what, err)
		}
		if s := strings.TrimSpace(string(data)); s != "" {
			return s, nil
		}
		return "", kinded(ErrInput, "the %s file %s is empty", what, file)
	}
	if env != "" {
		if s := strings.TrimSpace(k.Getenv(env)); s != "" {
			return s, nil
		}
		return "", kinded(ErrInput, "%s is empty: no %s", env, what)
	}
	return "", kinded(ErrInput, "no %s given", what)
}

// renewMachine runs a stored machine grant again and stores the new token.
// A failure is ErrAuthRequired unless it is already of a kind or is
// transient (no answer, a timeout, a cancellation: the caller classifies
// those), and names the grant and the server's answer.
func (k *Keeper) renewMachine(st Store, e Entry, b Bundle) (Bundle, error) {
	ctx, cancel := context.WithTimeout(context.Background(), renewTimeout)
	defer cancel()
	tok, d, err := k.MachineGrant(ctx, b)
	if err != nil {
		err = fmt.Errorf("renewing the token for %s: %w", e.Server, err)
		var ne net.Error
		if !hasKind(err) && !errors.As(err, &ne) && ctx.Err() == nil {
			err = &kindError{kind: ErrAuthRequired, err: err}
		}
		return b, &LoginError{Server: e.Server, Machine: true, Err: err}
	}
	if err := b.Fill(tok, d); err != nil {
		return b, err
	}
	return b, save(st, e, b, "renewed token")
}

// machineExpired reports whether a machine token should be renewed.
func (k *Keeper) machineExpired(b Bundle) bool {
	return b.Grant != nil && (b.AccessToken == "" || !b.Expiry.IsZero() && !k.Clock.Now().Before(b.Expiry.Add(-max(RenewSkew, k.MinTTL))))
}
