package host

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/hostconfig"
)

// RemoveOptions are `host remove`'s arguments.
type RemoveOptions struct {
	F       *cmdutil.Factory
	Machine Machine
	Host    string
	Name    string
	File    string
	Force   bool
}

func newRemoveCmd(f *cmdutil.Factory, runF func(cmdutil.Context, *RemoveOptions) error) *cobra.Command {
	opts := &RemoveOptions{F: f, Machine: system()}
	cmd := &cobra.Command{
		Use:   "remove <host> <name>",
		Short: "Remove an entry from a host's config file",
		Long: `Remove the entry <name> from the host's config file, keeping the rest of the
file and a copy of it as it was (` + hostconfig.BackupSuffix + `). An entry that does not run
mcpauth proxy is removed only with --force.`,
		Example:           "  mcpauth host remove claude-code example",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeHost,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Host, opts.Name = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RemoveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "the config file to edit (default: the host's own for this user and OS)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the entry even if it does not run mcpauth proxy")
	return cmd
}

// RemoveRun removes the entry.
func RemoveRun(_ cmdutil.Context, opts *RemoveOptions) error {
	hf, err := open(opts.Machine, opts.Host, opts.File)
	if err != nil {
		return err
	}
	h, found := hf.host, hf.find(opts.Name)
	if found == nil {
		return clierr.WithExit(clierr.ExitFailure, fmt.Errorf("%s has no server named %q (in %s)", h.Title, opts.Name, hf.path))
	}
	if found.Entry.URL() == "" && !opts.Force {
		return clierr.WithExit(clierr.ExitFailure, fmt.Errorf("%q in %s does not run mcpauth proxy: --force removes it anyway", opts.Name, hf.path))
	}
	out, _, err := h.Remove(hf.data, opts.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", hf.path, err)
	}
	backup, err := hf.write(out)
	if err != nil {
		return err
	}
	ui := cmdutil.NewUI(opts.F)
	ui.Success("removed %q from %s (%s)", opts.Name, h.Title, hf.path)
	ui.Info("the file as it was: %s", backup)
	return nil
}
