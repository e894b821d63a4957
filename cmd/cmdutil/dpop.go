package cmdutil

import (
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// DPoPChoice is what the user said about DPoP (RFC 9449): Insist
// (--dpop), Refuse (--no-dpop), or neither: automatic.
type DPoPChoice struct{ Insist, Refuse bool }

// Check refuses both at once, before anything is sent.
func (c DPoPChoice) Check() error {
	if c.Insist && c.Refuse {
		return clierr.FlagErrorf("--dpop and --no-dpop contradict each other")
	}
	return nil
}

// LoginDPoP returns the key a login binds its tokens to, or nil for
// Bearer (creds.Keeper.LoginKey decides), after checking the flags.
func (f *Factory) LoginDPoP(st *keyring.Store, disc *flows.Discovery, choice DPoPChoice) (*flows.DPoP, error) {
	if err := choice.Check(); err != nil {
		return nil, err
	}
	return f.Keeper().LoginKey(st, disc, choice.Insist, choice.Refuse)
}
