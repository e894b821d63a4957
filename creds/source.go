package creds

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Source is the stored credential for one server as a
// flows.CredentialSource: what a flows.Transport presents, renewed under
// the store's rules after a refusal (a refresh under the entry lock, a
// Bearer token for a Bearer-only resource, a new login where the command
// allows one). Logging in is the command's to do: creds does not open
// browsers. Safe for concurrent use.
type Source struct {
	Keeper *Keeper
	Server string // the storage key the credential is loaded again by
	// Reload is how long the credential is used before it is read again
	// from storage, where another process may have refreshed it or
	// logged in (0: never).
	Reload time.Duration
	// LogInAgain logs in anew and stores the credential, for when a
	// refresh cannot help: once, after a Bearer-only resource refused a
	// DPoP-bound token (nil: never).
	LogInAgain func(ctx context.Context) error
	// StepUp logs in again for granted plus required, the scope a 403
	// insufficient_scope asked for, and stores the credential (nil: no
	// step-up). At most MaxStepUps times (0: flows.DefaultMaxStepUps),
	// so a resource that never accepts does not loop.
	StepUp     func(ctx context.Context, granted, required string) error
	MaxStepUps int
	// Log says what the source did (nil: nothing).
	Log func(format string, args ...any)

	mu           sync.Mutex
	cred         Credential
	loaded       time.Time
	stepUps      int
	asked        string // the scope of the last step-up
	bearerLogins int
}

// NewSource starts a Source with cred, just loaded by k for server.
func NewSource(k *Keeper, server string, cred Credential) *Source {
	return &Source{Keeper: k, Server: server, cred: cred, loaded: k.Clock.Now()}
}

// Present is what a flows.Transport sends for c.
func (c Credential) Present() flows.Credential {
	return flows.Credential{Token: c.Token, DPoP: c.DPoP, Scope: c.Scope}
}

// Current is the credential the source holds now.
func (s *Source) Current() Credential {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cred
}

// Credential implements flows.CredentialSource.
func (s *Source) Credential(ctx context.Context) (flows.Credential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.Keeper.Clock.Now(); s.Reload > 0 && !s.cred.FromEnv && now.Sub(s.loaded) > s.Reload {
		s.loaded = now
		if n, err := s.Keeper.Fresh(ctx, s.Server); err == nil {
			s.cred = n
		} else {
			s.log("reading the stored credential again: %v (still using the one loaded before)", err)
		}
	}
	return s.cred.Present(), nil
}

// Renew implements flows.CredentialSource: a refresh after a 401 (for a
// Bearer token where the resource takes only Bearer), else the credential
// stored meanwhile; a step-up after a 403.
func (s *Source) Renew(ctx context.Context, rejected flows.Credential, r flows.Refusal) (flows.Credential, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cred.Token != rejected.Token {
		return s.cred.Present(), true, nil // renewed meanwhile, for another request
	}
	if r.Why == flows.RenewScope {
		return s.stepUp(ctx, rejected.Token, r.Required)
	}
	renew := s.Keeper.Retry
	if r.Why == flows.RenewBearerOnly {
		// A refresh without a proof, where the refresh token allows it.
		renew = s.Keeper.RetryAsBearer
	}
	n, ok, err := renew(ctx, s.cred)
	if err != nil {
		return rejected, false, err
	}
	if !ok && r.Why == flows.RenewBearerOnly && s.LogInAgain != nil && s.bearerLogins == 0 {
		// Once: a resource whose metadata claims DPoP while its 401 offers
		// none would otherwise send every request to the browser.
		s.bearerLogins++
		s.log("%s takes only Bearer tokens and the stored one is DPoP-bound: logging in again for a Bearer token", s.Server)
		return s.replace(ctx, rejected.Token, s.LogInAgain)
	}
	if !ok && !s.cred.FromEnv {
		// Nothing to refresh with: perhaps a new login has been stored.
		if n, err = s.Keeper.Fresh(ctx, s.Server); err != nil {
			return rejected, false, err
		}
	}
	s.loaded = s.Keeper.Clock.Now()
	if n.Token == "" || n.Token == rejected.Token {
		return rejected, false, nil
	}
	s.log("the server refused the token: renewed it, sending again")
	s.cred = n
	return n.Present(), true, nil
}

// Replace runs login (nil: none) and takes the credential stored then,
// unless the source already holds another than rejected. ok reports a
// credential other than rejected.
func (s *Source) Replace(ctx context.Context, rejected flows.Credential, login func(ctx context.Context) error) (flows.Credential, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cred.Token != rejected.Token {
		return s.cred.Present(), true, nil
	}
	return s.replace(ctx, rejected.Token, login)
}

// stepUp logs in for the granted scope plus required, at most MaxStepUps
// times. s.mu is held.
func (s *Source) stepUp(ctx context.Context, rejected, required string) (flows.Credential, bool, error) {
	if s.StepUp == nil {
		return s.cred.Present(), false, nil
	}
	if s.stepUps >= cmp.Or(s.MaxStepUps, flows.DefaultMaxStepUps) {
		return s.cred.Present(), false, flows.NewStepUpError(s.stepUps, s.asked, s.cred.Scope, required)
	}
	s.stepUps++
	granted := s.cred.Scope
	s.asked = oauthwire.UnionScopes(granted, required)
	return s.replace(ctx, rejected, func(ctx context.Context) error { return s.StepUp(ctx, granted, required) })
}

// replace runs login and loads the credential it stored. s.mu is held.
func (s *Source) replace(ctx context.Context, rejected string, login func(ctx context.Context) error) (flows.Credential, bool, error) {
	if login != nil {
		if err := login(ctx); err != nil {
			return s.cred.Present(), false, err
		}
	}
	n, err := s.Keeper.Fresh(ctx, s.Server)
	if err != nil {
		return s.cred.Present(), false, err
	}
	s.cred, s.loaded = n, s.Keeper.Clock.Now()
	return n.Present(), n.Token != rejected, nil
}

func (s *Source) log(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}
