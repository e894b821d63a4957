package creds

import (
	"fmt"

	"github.com/mcpauth/mcpauth/flows"
)

// LoginKey returns the key a login (browser, device or machine) binds its
// tokens to, or nil for Bearer tokens (RFC 9449). The resource decides,
// not the authorization server: DPoP is used when insist is set, or,
// unless refuse is set, when the resource requires bound tokens or says it
// takes them (Discovery.ResourceTakesDPoP) and the authorization server
// advertises DPoP. An authorization server that merely offers DPoP gets
// Bearer: most MCP servers refuse a DPoP-bound token. The key a previous
// login to the same issuer and resource stored is kept: one key per
// server. A server that advertises DPoP without ES256 gets Bearer with a
// warning, or an error when DPoP was insisted on.
func (k *Keeper) LoginKey(st Store, disc *flows.Discovery, insist, refuse bool) (*flows.DPoP, error) {
	md := disc.AuthServer
	advertised, es256 := flows.DPoPSupported(md)
	required := disc.ResourceMetadata != nil && disc.ResourceMetadata.DPoPBoundAccessTokensRequired
	if !insist && (refuse || !required && !(advertised && disc.ResourceTakesDPoP())) {
		return nil, nil
	}
	if advertised && !es256 {
		if insist {
			return nil, fmt.Errorf("--dpop: %w (it lists %v)", flows.ErrDPoPAlgUnsupported, md.DPoPSigningAlgValuesSupported)
		}
		k.Warn("the server advertises DPoP without ES256 (%v); continuing without DPoP", md.DPoPSigningAlgValuesSupported)
		return nil, nil
	}
	if old, err := Load(st, StoreKey(disc), k.Account); err == nil && old.Issuer == disc.Issuer && old.DPoPKey != "" {
		if d, err := flows.ParseDPoPKey(old.DPoPKey, k.Clock); err == nil {
			return d, nil
		}
	}
	return flows.NewDPoP(k.Clock)
}
