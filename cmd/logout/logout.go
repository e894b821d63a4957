// Package logout implements `mcpauth logout`: forget stored credentials.
package logout

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// Options are logout's flags.
type Options struct {
	F      *cmdutil.Factory
	Server string
	All    bool
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "logout [<mcp-url>]",
		Short: "Revoke and delete stored credentials",
		Long: `Revoke the stored token at the authorization server's revocation endpoint
(RFC 7009), when it has one, then delete it. The refresh token is revoked when
there is one (servers revoke its access tokens with it), else the access
token. A failed revocation is reported but the local credential is deleted
anyway; so is a token that cannot be read to revoke it (the OS keyring that
seals it is unavailable), with what stays valid at the server and until when.`,
		Example: "  mcpauth logout http://127.0.0.1:8080/mcp\n  mcpauth logout --all",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if opts.All && len(args) > 0 {
				return clierr.FlagErrorf("--all takes no server argument")
			}
			return nil
		},
		RunE: cmdutil.RunE(opts, &opts.Server, runF, Run),
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "delete every stored credential")
	return cmd
}

// Run revokes and deletes.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	ui := cmdutil.NewUI(f)
	st, err := f.OpenStoreToRead()
	if err != nil {
		return err
	}
	if opts.All {
		infos, err := creds.List(st)
		if err != nil {
			return clierr.WithExit(clierr.ExitStorage, err)
		}
		for _, e := range infos {
			if err := logout(ctx, f, ui, st, e); err != nil {
				return err
			}
		}
		if len(infos) == 0 {
			ui.Info("Nothing stored.")
		}
		return nil
	}
	e, err := creds.Resolve(st, opts.Server, f.Globals.Account)
	if err != nil {
		return err
	}
	return logout(ctx, f, ui, st, e)
}

// logout revokes e's token where the server offers revocation, then
// deletes it. Where it cannot revoke it says what stays valid and until
// when, and does not claim a logout the server never saw: deleting a
// credential here does not end it there. Logging out must still forget
// the credential locally.
func logout(ctx context.Context, f *cmdutil.Factory, ui *cmdutil.UI, st *keyring.Store, e creds.Entry) error {
	ended := true
	if d, ok := cmdutil.ToDrop(st, e.Server, e.Account); ok {
		ended = f.RevokeDropped(ctx, e.Server, d, "only this copy is deleted")
	}
	if err := st.Delete(e.Server, e.Account); err != nil {
		return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("deleting %s (%s): %w", e.Server, e.Account, err))
	}
	if !ended {
		ui.Warn("deleted the credential for %s (%s) on this machine only", e.Server, e.Account)
		return nil
	}
	ui.Success("Logged out of %s (%s)", e.Server, e.Account)
	return nil
}
