package proxy

import (
	"context"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/creds"
)

// StepUpSource is the proxy's credential source with step-up on, as Run
// builds it with --login, for tests that drive it without a host.
func StepUpSource(f *cmdutil.Factory, server string, log func(string, ...any)) (step func(ctx context.Context, token, scope string) (bool, error), current func() creds.Credential, err error) {
	cred, err := f.Keeper().Fresh(context.Background(), server)
	if err != nil {
		return nil, nil, err
	}
	src := &credSource{f: f, server: server, cred: cred, loaded: f.Clock.Now(), log: log}
	opts := &Options{F: f, Server: server, Login: true}
	src.stepUp = func(ctx context.Context, granted, required string) error {
		_, err := logIn(ctx, opts, granted, required, log)
		return err
	}
	s := steppingSource{src}
	return s.StepUp, func() creds.Credential {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cred
	}, nil
}
