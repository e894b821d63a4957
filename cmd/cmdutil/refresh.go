package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// refreshLockTimeout bounds the wait for another process's refresh of the
// same entry: one refresh is a single token request (60 s HTTP timeout at
// worst), so waiting that long means it hung.
const refreshLockTimeout = 70 * time.Second

// FreshCredential is LoadCredential that refreshes: an OAuth token that has
// expired or expires within flows.DefaultRefreshMargin is refreshed with the
// stored refresh token first. It never starts a login: a refused refresh
// (invalid_grant) is exit 3 with a `mcpauth login` hint.
func (f *Factory) FreshCredential(ctx context.Context, arg string) (Credential, error) {
	return f.credential(ctx, arg, "")
}

// RetryCredential is for a credential the resource has just refused with a
// 401 invalid_token: it refreshes once, unless another process has already
// replaced the rejected token, and returns ok=false when there is nothing
// to retry with (MCPAUTH_TOKEN, an API key, no refresh token).
func (f *Factory) RetryCredential(ctx context.Context, rejected Credential) (Credential, bool, error) {
	if rejected.FromEnv || rejected.Kind == keyring.KindAPIKey || !rejected.refreshable {
		return rejected, false, nil
	}
	c, err := f.credential(ctx, rejected.Server, rejected.Token)
	return c, err == nil, err
}

// credential loads the credential for arg and refreshes it when it is
// expiring or, with rejected set, when it is still the token the resource
// refused.
func (f *Factory) credential(ctx context.Context, arg, rejected string) (Credential, error) {
	if strings.TrimSpace(f.Getenv("MCPAUTH_TOKEN")) != "" {
		return f.LoadCredential(arg)
	}
	st, err := f.OpenStoreToRead()
	if err != nil {
		return Credential{}, err
	}
	e, err := ResolveServer(st, arg, f.Globals.Account)
	if err != nil {
		return Credential{}, err
	}
	b, err := loadBundle(st, e)
	if err != nil {
		return Credential{}, err
	}
	c := Credential{Server: e.Server, BaseURL: PingBase(b, e.Server), Kind: b.Kind, Scope: b.Scope, Issuer: b.Issuer, User: User{ID: b.UserID, Name: b.UserName}, refreshable: b.Refreshable()}
	if b.Kind == keyring.KindAPIKey {
		c.Token = b.APIKey
		return c, nil
	}
	if c.DPoP, err = f.dpopOf(b); err != nil {
		return Credential{}, err
	}
	if b.Grant != nil {
		// A machine login has no refresh token: it renews by running its
		// grant again (under the same rules as LoadCredential).
		if f.machineExpired(b) {
			if b, err = f.renewMachine(st, e, b); err != nil {
				return Credential{}, err
			}
		}
		c.Token = b.AccessToken
		return c, nil
	}
	if done, err := f.usable(&c, b, rejected); done || err != nil {
		return c, err
	}
	if b.Resource != "" && !flows.ResourceCovers(b.Resource, e.Server) {
		return Credential{}, WithExit(ExitAuthRequired, fmt.Errorf("the stored refresh token for %s was issued for another resource (%s) and is not sent; run: mcpauth login %s", e.Server, b.Resource, e.Server))
	}

	// Strict servers revoke the whole family when a refresh token is used
	// twice, so only one process may redeem it: take the entry lock, then
	// read the bundle again, as another process may have refreshed it while
	// this one waited.
	unlock, err := st.LockEntry(e.Server, e.Account, refreshLockTimeout)
	if err != nil {
		return Credential{}, WithExit(ExitStorage, fmt.Errorf("locking the credential for %s to refresh it: %w", e.Server, err))
	}
	defer unlock()
	if b, err = loadBundle(st, e); err != nil {
		return Credential{}, err
	}
	if b.AccessToken != rejected || rejected == "" {
		if done, err := f.usable(&c, b, ""); done || err != nil {
			return c, err
		}
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return Credential{}, err
	}
	key, err := f.dpopOf(b) // a bound refresh token needs its key's proof
	if err != nil {
		return Credential{}, err
	}
	tok, err := flows.Refresh(ctx, flows.RefreshConfig{
		HTTPClient: hc, Clock: f.Clock, TokenURL: b.TokenEndpoint, Resource: b.Resource, Issuer: b.Issuer, DPoP: key,
		Client: flows.Client{ID: b.Client.ClientID, Secret: b.Client.ClientSecret, AuthMethod: authMethod(b.Client)},
	}, b.RefreshToken)
	now := f.Clock.Now()
	switch {
	case errors.Is(err, flows.ErrRefreshRefused):
		return Credential{}, WithExit(ExitAuthRequired, fmt.Errorf("the server no longer accepts the refresh token for %s (%w); run: mcpauth login %s", e.Server, err, e.Server))
	case err != nil && rejected == "" && now.Before(b.Expiry):
		// Not expired yet: use it, the next command tries again.
		NewUI(f).Warn("could not refresh the token for %s (%v); using the current one, which expires at %s", e.Server, err, b.Expiry.Format(time.RFC3339))
		c.Token = b.AccessToken
		return c, nil
	case err != nil:
		return Credential{}, WithExit(ExitNetwork, fmt.Errorf("refreshing the token for %s: %w", e.Server, err))
	}
	nb := b
	if err := FillToken(&nb, tok, key); err != nil {
		return Credential{}, err
	}
	// Saved before use: with rotation the old refresh token is now spent,
	// and a token used but not saved would strand the next command.
	if err := st.Save(e.Server, e.Account, nb); err != nil {
		return Credential{}, WithExit(ExitStorage, fmt.Errorf("storing the refreshed token for %s (log in again if the next command fails): %w", e.Server, err))
	}
	c.Token, c.Scope = nb.AccessToken, nb.Scope
	return c, nil
}

// usable sets c.Token and reports done when b's access token needs no
// refresh (or cannot have one), or an error when it is unusable.
func (f *Factory) usable(c *Credential, b keyring.TokenBundle, rejected string) (bool, error) {
	now := f.Clock.Now()
	expired := !b.Expiry.IsZero() && !now.Before(b.Expiry)
	if rejected == "" && !flows.NeedsRefresh(b.Expiry, now, flows.DefaultRefreshMargin) {
		c.Token = b.AccessToken
		return true, nil
	}
	if b.Refreshable() {
		return false, nil
	}
	if expired || rejected != "" {
		return true, WithExit(ExitAuthRequired, fmt.Errorf("the token for %s expired at %s and there is no refresh token; run: mcpauth login %s", c.Server, b.Expiry.Format("2006-01-02 15:04 MST"), c.Server))
	}
	c.Token = b.AccessToken // expiring soon, nothing to refresh it with
	return true, nil
}

func loadBundle(st *keyring.Store, e keyring.EntryInfo) (keyring.TokenBundle, error) {
	b, err := st.Load(e.Server, e.Account)
	if errors.Is(err, keyring.ErrNotFound) {
		return b, WithExit(ExitAuthRequired, fmt.Errorf("no stored credential for %s; run: mcpauth login %s", e.Server, e.Server))
	}
	if err != nil {
		return b, WithExit(ExitStorage, fmt.Errorf("reading the stored credential: %w", err))
	}
	return b, nil
}

func authMethod(ci *keyring.ClientInfo) string {
	switch {
	case ci.TokenEndpointAuthMethod != "":
		return ci.TokenEndpointAuthMethod
	case ci.ClientSecret != "":
		return flows.AuthMethodBasic
	}
	return flows.AuthMethodNone
}
