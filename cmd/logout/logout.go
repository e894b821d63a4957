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
anyway.`,
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
			revoke(ctx, f, ui, st, e)
			if err := st.Delete(e.Server, e.Account); err != nil {
				return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("deleting %s (%s): %w", e.Server, e.Account, err))
			}
			ui.Success("Logged out of %s (%s)", e.Server, e.Account)
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
	revoke(ctx, f, ui, st, e)
	if err := st.Delete(e.Server, e.Account); err != nil {
		return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("deleting %s: %w", e.Server, err))
	}
	ui.Success("Logged out of %s (%s)", e.Server, e.Account)
	return nil
}

// revoke revokes e's token where the server offers revocation, and says
// what stays valid where it cannot: deleting a credential here does not end
// it at the server. Failures are warnings: logging out must still forget
// the credential locally.
func revoke(ctx context.Context, f *cmdutil.Factory, ui *cmdutil.UI, st *keyring.Store, e creds.Entry) {
	b, err := creds.Load(st, e.Server, e.Account)
	if err != nil {
		return
	}
	f.RevokeStored(ctx, e.Server, b, "only this copy is deleted")
}
