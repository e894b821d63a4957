package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Credential is what ping and token present to a server.
type Credential struct {
	Server  string // storage key ("" for MCPAUTH_TOKEN)
	BaseURL string // where /api/ping lives
	Token   string
	Kind    keyring.Kind
	FromEnv bool
	// DPoP is the key a DPoP-bound token needs a proof from on every
	// request (nil for Bearer tokens).
	DPoP  *flows.DPoP
	Scope string // the scope granted with the token, when known
	// User is who the login found the credential belongs to (stored with
	// it; empty for MCPAUTH_TOKEN).
	User User
	// Issuer is the authorization server that issued it ("" for API keys
	// and MCPAUTH_TOKEN): a resource that names another one has moved.
	Issuer string

	refreshable bool
}

// LoadCredential finds the credential for arg without ever starting a
// login: MCPAUTH_TOKEN first (for CI: storage is not even opened, so a
// machine without a keyring works), then the stored entry. An expired token
// is "auth required" (exit 3) with a hint. With MCPAUTH_TOKEN and no arg,
// BaseURL is empty: the caller decides whether it needs one.
func (f *Factory) LoadCredential(arg string) (Credential, error) {
	if tok := strings.TrimSpace(f.Getenv("MCPAUTH_TOKEN")); tok != "" {
		c := Credential{Token: tok, Kind: keyring.KindOAuth, FromEnv: true}
		if arg != "" {
			c.BaseURL = PingBase(keyring.TokenBundle{}, ServerKey(arg))
		}
		return c, nil
	}
	st, err := f.OpenStoreToRead()
	if err != nil {
		return Credential{}, err
	}
	e, err := ResolveServer(st, arg, f.Globals.Account)
	if err != nil {
		return Credential{}, err
	}
	b, err := st.Load(e.Server, e.Account)
	if errors.Is(err, keyring.ErrNotFound) {
		return Credential{}, WithExit(ExitAuthRequired, fmt.Errorf("no stored credential for %s; run: mcpauth login %s", e.Server, e.Server))
	}
	if err != nil {
		return Credential{}, WithExit(ExitStorage, fmt.Errorf("reading the stored credential: %w", err))
	}
	c := Credential{Server: e.Server, BaseURL: PingBase(b, e.Server), Kind: b.Kind, Issuer: b.Issuer, User: User{ID: b.UserID, Name: b.UserName}}
	if b.Kind == keyring.KindAPIKey {
		c.Token = b.APIKey
		return c, nil
	}
	if f.machineExpired(b) { // machine logins renew by running their grant again
		if b, err = f.renewMachine(st, e, b); err != nil {
			return Credential{}, err
		}
	}
	if c.DPoP, err = f.dpopOf(b); err != nil {
		return Credential{}, err
	}
	if !b.Expiry.IsZero() && !f.Clock.Now().Before(b.Expiry) {
		return Credential{}, WithExit(ExitAuthRequired, fmt.Errorf("the token for %s expired at %s; run: mcpauth login %s", e.Server, b.Expiry.Format("2006-01-02 15:04 MST"), e.Server))
	}
	c.Token = b.AccessToken
	return c, nil
}
