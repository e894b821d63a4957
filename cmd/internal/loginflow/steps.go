package loginflow

import (
	"context"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// discover is the first step of a browser or device login: the target
// checked, then precheck (nil: none), the store opened, and discovery.
func discover(ctx context.Context, f *cmdutil.Factory, phase *clierr.Phase, rawTarget string, df cmdutil.DiscoverFlags,
	precheck func() error) (target string, st *keyring.Store, disc *flows.Discovery, err error) {
	if target, err = cmdutil.ParseTarget(rawTarget); err != nil {
		return "", nil, nil, err
	}
	if precheck != nil {
		if err := precheck(); err != nil {
			return "", nil, nil, err
		}
	}
	if st, err = f.OpenStore(); err != nil {
		return "", nil, nil, err
	}
	phase.Set("discovering " + target)
	if disc, err = f.Discover(ctx, target, df); err != nil {
		return "", nil, nil, err
	}
	return target, st, disc, nil
}

// resolveClient warns about the login this one would replace, and picks
// the client identity by ccfg, which it completes with the factory's HTTP
// client and clock and the store's registration cache (the login's other
// requests and a re-registration use them too).
func resolveClient(ctx context.Context, f *cmdutil.Factory, phase *clierr.Phase, st *keyring.Store, disc *flows.Discovery,
	ccfg *flows.ClientConfig) (flows.Client, error) {
	f.NoteReplace(st, creds.ServerKey(disc.Resource), f.Globals.Account, " if this login succeeds")
	hc, err := f.HTTPClient()
	if err != nil {
		return flows.Client{}, err
	}
	ccfg.HTTPClient, ccfg.Clock, ccfg.Cache = hc, f.Clock, creds.RegistrationCache{Store: st}
	phase.Set("registering a client at " + disc.Issuer)
	client, err := flows.ResolveClient(ctx, *ccfg, disc)
	if err != nil {
		return flows.Client{}, clierr.FlowError("choosing a client identity", err)
	}
	return client, nil
}
