package proxy

import (
	"context"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
)

// StepUpSource is the proxy's credential source with step-up on, as Run
// builds it with --login, for tests that drive it without a host.
func StepUpSource(f *cmdutil.Factory, server string, log func(string, ...any)) (step func(ctx context.Context, token, scope string) (bool, error), current func() creds.Credential, err error) {
	cred, err := f.Keeper().Fresh(context.Background(), server)
	if err != nil {
		return nil, nil, err
	}
	src := newSource(&Options{F: f, Server: server, Login: true}, cred, log)
	return func(ctx context.Context, token, scope string) (bool, error) {
		_, ok, err := src.Renew(ctx, flows.Credential{Token: token}, flows.Refusal{Why: flows.RenewScope, Required: scope})
		return ok, err
	}, src.Current, nil
}
