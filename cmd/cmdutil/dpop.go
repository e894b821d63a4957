package cmdutil

import (
	"fmt"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// DPoPChoice is what the user said about DPoP (RFC 9449): Insist
// (--dpop), Refuse (--no-dpop), or neither: automatic.
type DPoPChoice struct{ Insist, Refuse bool }

// Check refuses both at once, before anything is sent.
func (c DPoPChoice) Check() error {
	if c.Insist && c.Refuse {
		return FlagErrorf("--dpop and --no-dpop contradict each other")
	}
	return nil
}

// LoginDPoP returns the key a login (browser, device or machine) binds its
// tokens to, or nil for Bearer tokens. DPoP is used when the user insists,
// or when the authorization server advertises it or the resource requires
// bound tokens and the user did not refuse it. The key a previous login to
// the same issuer and resource used is kept: one key per server.
func (f *Factory) LoginDPoP(st *keyring.Store, disc *flows.Discovery, choice DPoPChoice) (*flows.DPoP, error) {
	if err := choice.Check(); err != nil {
		return nil, err
	}
	md := disc.AuthServer
	advertised, es256 := flows.DPoPSupported(md)
	required := disc.ResourceMetadata != nil && disc.ResourceMetadata.DPoPBoundAccessTokensRequired
	if !choice.Insist && (choice.Refuse || !advertised && !required) {
		return nil, nil
	}
	if advertised && !es256 {
		if choice.Insist {
			return nil, WithExit(ExitFailure, fmt.Errorf("--dpop: %w (it lists %v)", flows.ErrDPoPAlgUnsupported, md.DPoPSigningAlgValuesSupported))
		}
		NewUI(f).Warn("the server advertises DPoP without ES256 (%v); continuing without DPoP", md.DPoPSigningAlgValuesSupported)
		return nil, nil
	}
	if old, err := st.Load(StoreKey(disc), f.Globals.Account); err == nil && old.Issuer == disc.Issuer && old.DPoPKey != "" {
		if d, err := flows.ParseDPoPKey(old.DPoPKey, f.Clock); err == nil {
			return d, nil
		}
	}
	return flows.NewDPoP(f.Clock)
}
