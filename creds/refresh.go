package creds

import (
	"context"
	"errors"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// refreshLockTimeout bounds the wait for another process's refresh of the
// same entry: one refresh is a single token request (60 s HTTP timeout at
// worst), so waiting that long means it hung.
const refreshLockTimeout = 70 * time.Second

// Fresh is Load that refreshes: an OAuth token that has expired or expires
// within flows.RefreshMargin of its lifetime is refreshed with the stored refresh
// token first. It never starts a login: a refused refresh (invalid_grant)
// is ErrAuthRequired.
func (k *Keeper) Fresh(ctx context.Context, arg string) (Credential, error) {
	return k.credential(ctx, arg, renewal{})
}

// Retry is for a credential the resource has just refused with a 401
// invalid_token: it refreshes once, unless another process has already
// replaced the rejected token, and returns ok=false when there is nothing
// to retry with (an EnvToken, an API key, no refresh token).
func (k *Keeper) Retry(ctx context.Context, rejected Credential) (Credential, bool, error) {
	if rejected.FromEnv || rejected.Kind == KindAPIKey || !rejected.refreshable {
		return rejected, false, nil
	}
	c, err := k.credential(ctx, rejected.Server, renewal{rejected: rejected.Token})
	return c, err == nil, err
}

// RetryAsBearer is Retry for a DPoP-bound credential that the resource
// refused for its scheme (flows.ResourceError.RefusesDPoP: it takes only
// Bearer tokens). A confidential client's refresh token is not bound to
// the key (RFC 9449 §5), so it is redeemed without a proof, for a Bearer
// token that replaces the bound one. A public client's refresh token is
// bound: ok=false, and only a new login helps (which picks Bearer, as the
// resource offers no DPoP challenge).
func (k *Keeper) RetryAsBearer(ctx context.Context, rejected Credential) (Credential, bool, error) {
	if rejected.DPoP == nil || rejected.FromEnv || rejected.Kind != KindOAuth || !rejected.refreshable {
		return rejected, false, nil
	}
	c, err := k.credential(ctx, rejected.Server, renewal{rejected: rejected.Token, asBearer: true})
	if errors.Is(err, errBoundRefresh) {
		return rejected, false, nil
	}
	return c, err == nil, err
}

// renewal says why a credential is loaded again: rejected is the token the
// resource refused ("" for none), and asBearer asks for a Bearer token in
// place of a DPoP-bound one.
type renewal struct {
	rejected string
	asBearer bool
}

// errBoundRefresh: a public client's refresh token cannot be redeemed
// without its DPoP key.
var errBoundRefresh = errors.New("the refresh token is bound to the DPoP key")

// credential loads the credential for arg and refreshes it when it is
// expiring or, with r.rejected set, when it is still the token the
// resource refused.
func (k *Keeper) credential(ctx context.Context, arg string, r renewal) (Credential, error) {
	if k.EnvToken != "" {
		return k.fromEnv(arg), nil
	}
	st, e, b, err := k.entry(arg)
	if err != nil {
		return Credential{}, err
	}
	c := Credential{Server: e.Server, BaseURL: PingBase(b.Resource, e.Server), Kind: b.Kind, Scope: b.Scope, Issuer: b.Issuer,
		User: User{ID: b.UserID, Name: b.UserName}, refreshable: b.Refreshable()}
	if b.Kind == KindAPIKey {
		c.Token = b.APIKey
		return c, nil
	}
	if c.DPoP, err = k.KeyOf(b); err != nil {
		return Credential{}, err
	}
	if b.Grant != nil {
		// A machine login has no refresh token: it renews by running its
		// grant again (under the same rules as Load).
		if k.machineExpired(b) {
			if b, err = k.renewMachine(st, e, b); err != nil {
				return Credential{}, err
			}
		}
		c.Token = b.AccessToken
		return c, nil
	}
	if done, err := k.usable(&c, b, r.rejected); done || err != nil {
		return c, err
	}
	if b.Resource != "" && !flows.ResourceCovers(b.Resource, e.Server) {
		return Credential{}, loginNeeded(e.Server, "the stored refresh token for %s was issued for another resource (%s) and is not sent", e.Server, b.Resource)
	}
	if r.asBearer && b.Client.flowsClient().AuthMethod == flows.AuthMethodNone {
		return Credential{}, errBoundRefresh
	}
	return k.refresh(ctx, st, e, c, r)
}

// refresh redeems e's refresh token and stores the result. Strict servers
// revoke the whole family when a refresh token is used twice, so only one
// process may redeem it: it takes the entry lock, then reads the bundle
// again, as another process may have refreshed it while this one waited.
func (k *Keeper) refresh(ctx context.Context, st Store, e Entry, c Credential, r renewal) (Credential, error) {
	rejected := r.rejected
	unlock, err := st.LockEntry(e.Server, e.Account, refreshLockTimeout)
	if err != nil {
		return Credential{}, kinded(ErrStorage, "locking the credential for %s to refresh it: %w", e.Server, err)
	}
	defer unlock()
	b, err := loadEntry(st, e)
	if err != nil {
		return Credential{}, err
	}
	if b.AccessToken != rejected || rejected == "" {
		if c.DPoP, err = k.KeyOf(b); err != nil { // another process may have stored another binding
			return Credential{}, err
		}
		if done, err := k.usable(&c, b, ""); done || err != nil {
			return c, err
		}
	}
	hc, err := k.HTTPClient()
	if err != nil {
		return Credential{}, err
	}
	key, err := k.KeyOf(b) // a bound refresh token needs its key's proof
	if err != nil {
		return Credential{}, err
	}
	if r.asBearer {
		key = nil // no proof: the answer is a Bearer token (RFC 9449 §5)
	}
	tok, err := flows.Refresh(ctx, flows.RefreshConfig{
		HTTPClient: hc, Clock: k.Clock, TokenURL: b.TokenEndpoint, Resource: b.Resource, Issuer: b.Issuer, DPoP: key,
		Client: b.Client.flowsClient(),
	}, b.RefreshToken)
	switch {
	case errors.Is(err, flows.ErrRefreshRefused):
		return Credential{}, loginNeeded(e.Server, "the server no longer accepts the refresh token for %s (%w)", e.Server, err)
	case err != nil && rejected == "" && k.Clock.Now().Before(b.Expiry):
		// Not expired yet: use it, the next command tries again.
		k.Warn("could not refresh the token for %s (%v); using the current one, which expires at %s", e.Server, err, b.Expiry.Format(time.RFC3339))
		c.Token = b.AccessToken
		return c, nil
	case err != nil:
		return Credential{}, kinded(ErrRefresh, "refreshing the token for %s: %w", e.Server, err)
	}
	if err := b.Fill(tok, key); err != nil {
		return Credential{}, err
	}
	// Saved before use: with rotation the old refresh token is now spent,
	// and a token used but not saved would strand the next command.
	if err := save(st, e, b, "refreshed token for "+e.Server+" (log in again if the next command fails)"); err != nil {
		return Credential{}, err
	}
	c.Token, c.Scope, c.DPoP = b.AccessToken, b.Scope, key
	return c, nil
}

// usable sets c.Token and reports done when b's access token needs no
// refresh (or cannot have one), or an error when it is unusable.
func (k *Keeper) usable(c *Credential, b Bundle, rejected string) (bool, error) {
	margin := max(flows.RefreshMargin(time.Duration(b.Lifetime)*time.Second), k.MinTTL)
	if rejected == "" && !flows.NeedsRefresh(b.Expiry, k.Clock.Now(), margin) {
		c.Token = b.AccessToken
		return true, nil
	}
	if b.Refreshable() {
		return false, nil
	}
	if k.expired(b) || rejected != "" {
		return true, loginNeeded(c.Server, "the token for %s expired at %s and there is no refresh token", c.Server, b.Expiry.Format("2006-01-02 15:04 MST"))
	}
	c.Token = b.AccessToken // expiring soon, nothing to refresh it with
	return true, nil
}
