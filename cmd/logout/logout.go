// Package logout implements `mcpauth logout`: forget stored credentials.
package logout

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
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
		Use:     "logout [<mcp-url>]",
		Short:   "Delete stored credentials",
		Example: "  mcpauth logout http://127.0.0.1:8080/mcp\n  mcpauth logout --all",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Server = args[0]
			}
			if opts.All && opts.Server != "" {
				return cmdutil.FlagErrorf("--all takes no server argument")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "delete every stored credential")
	return cmd
}

// Run deletes.
func Run(_ context.Context, opts *Options) error {
	f := opts.F
	ui := cmdutil.NewUI(f)
	st, err := f.OpenStoreToRead()
	if err != nil {
		return err
	}
	if opts.All {
		infos, err := st.List()
		if err != nil {
			return cmdutil.WithExit(cmdutil.ExitStorage, err)
		}
		for _, e := range infos {
			if err := st.Delete(e.Server, e.Account); err != nil {
				return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("deleting %s (%s): %w", e.Server, e.Account, err))
			}
			ui.Success("Logged out of %s (%s)", e.Server, e.Account)
		}
		if len(infos) == 0 {
			ui.Info("Nothing stored.")
		}
		return nil
	}
	e, err := cmdutil.ResolveServer(st, opts.Server, f.Globals.Account)
	if err != nil {
		return err
	}
	if err := st.Delete(e.Server, e.Account); err != nil {
		return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("deleting %s: %w", e.Server, err))
	}
	ui.Success("Logged out of %s (%s)", e.Server, e.Account)
	return nil
}
