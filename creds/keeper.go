package creds

import (
	"net/http"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// Keeper loads, refreshes and renews stored credentials. Its fields are
// its dependencies, all injected: it keeps no state of its own between
// calls, so a zero-cost value may be built per command.
type Keeper struct {
	// Open opens the token storage (keyring.Open, for the CLI's own); it
	// is called only when needed (a token from the environment needs
	// none) and its error is returned as it is.
	Open func() (Store, error)
	// HTTPClient returns the client for token requests; its error is
	// returned as it is.
	HTTPClient func() (*http.Client, error)
	Clock      flows.Clock
	// Account is the account entries are stored under ("" is the default).
	Account string
	// EnvToken is an access token given in the environment (the CLI's
	// MCPAUTH_TOKEN): when set it is the credential, used as it is.
	EnvToken string
	// Getenv reads the variables a machine grant names for its assertion.
	Getenv func(string) string
	// Warn says something the user should know that does not stop the
	// command (a refresh that failed while the token still works).
	Warn func(format string, args ...any)
	// MinTTL makes Fresh refresh a token that would expire within it, when
	// that is longer than the usual margin: for a caller (a host's header
	// helper) that keeps the token for a while and never asks again after
	// a 401.
	MinTTL time.Duration
}

// Credential is what a command presents to a server.
type Credential struct {
	Server  string // storage key ("" for an EnvToken)
	BaseURL string // where /api/ping lives
	Token   string
	Kind    Kind
	FromEnv bool
	// DPoP is the key a DPoP-bound token needs a proof from on every
	// request (nil for Bearer tokens).
	DPoP  *flows.DPoP
	Scope string // the scope granted with the token, when known
	// User is who the login found the credential belongs to (stored with
	// it; empty for an EnvToken).
	User User
	// Issuer is the authorization server that issued it ("" for API keys
	// and an EnvToken): a resource that names another one has moved.
	Issuer string

	refreshable bool
}

// fromEnv is the credential an EnvToken gives; BaseURL is known only when
// the command named a server.
func (k *Keeper) fromEnv(arg string) Credential {
	c := Credential{Token: k.EnvToken, Kind: KindOAuth, FromEnv: true}
	if arg != "" {
		c.BaseURL = PingBase("", ServerKey(arg))
	}
	return c
}

// entry opens the storage and loads the entry for arg.
func (k *Keeper) entry(arg string) (Store, Entry, Bundle, error) {
	st, err := k.Open()
	if err != nil {
		return nil, Entry{}, Bundle{}, err
	}
	e, err := Resolve(st, arg, k.Account)
	if err != nil {
		return nil, e, Bundle{}, err
	}
	b, err := loadEntry(st, e)
	return st, e, b, err
}

// Load finds the credential for arg without refreshing it or starting a
// login: the EnvToken first (storage is not even opened, so a machine
// without a keyring works), then the stored entry. An expired token is
// ErrAuthRequired; an expired machine token is renewed first.
func (k *Keeper) Load(arg string) (Credential, error) {
	if k.EnvToken != "" {
		return k.fromEnv(arg), nil
	}
	st, e, b, err := k.entry(arg)
	if err != nil {
		return Credential{}, err
	}
	c := Credential{Server: e.Server, BaseURL: PingBase(b.Resource, e.Server), Kind: b.Kind, Issuer: b.Issuer, User: User{ID: b.UserID, Name: b.UserName}}
	if b.Kind == KindAPIKey {
		c.Token = b.APIKey
		return c, nil
	}
	if k.machineExpired(b) { // machine logins renew by running their grant again
		if b, err = k.renewMachine(st, e, b); err != nil {
			return Credential{}, err
		}
	}
	if c.DPoP, err = k.KeyOf(b); err != nil {
		return Credential{}, err
	}
	if k.expired(b) {
		return Credential{}, loginNeeded(e.Server, "the token for %s expired at %s", e.Server, b.Expiry.Format("2006-01-02 15:04 MST"))
	}
	c.Token = b.AccessToken
	return c, nil
}

func (k *Keeper) expired(b Bundle) bool {
	return !b.Expiry.IsZero() && !k.Clock.Now().Before(b.Expiry)
}

// KeyOf restores the DPoP key b's tokens are bound to (nil for Bearer).
func (k *Keeper) KeyOf(b Bundle) (*flows.DPoP, error) {
	if b.DPoPKey == "" || !strings.EqualFold(b.TokenType, flows.TokenTypeDPoP) {
		return nil, nil
	}
	d, err := flows.ParseDPoPKey(b.DPoPKey, k.Clock)
	if err != nil {
		return nil, kinded(ErrStorage, "the stored DPoP key: %w", err)
	}
	return d, nil
}
