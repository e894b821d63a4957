package config

import (
	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/keyring"
)

// SetOptions are `config set`'s arguments.
type SetOptions struct {
	F     *cmdutil.Factory
	Key   string
	Value keyring.Storage
}

func newSetCmd(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{F: f}
	return &cobra.Command{
		Use:     "set <key> <value>",
		Short:   "Change a setting",
		Example: "  mcpauth config set storage file\n  mcpauth config set storage auto",
		Args:    cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Key = args[0]
			if err := checkKey(opts.Key); err != nil {
				return err
			}
			v, err := storageValue(args[1])
			if err != nil {
				return err
			}
			opts.Value = v
			if runF != nil {
				return runF(opts)
			}
			return SetRun(opts)
		},
	}
}

// SetRun remembers the value, stamped with the injected clock.
func SetRun(opts *SetOptions) error {
	f := opts.F
	c, err := f.StorageChoice()
	if err != nil {
		return err
	}
	s := keyring.Settings{Storage: opts.Value, Reason: "set with mcpauth config set", SetAt: f.Clock.Now().UTC()}
	if err := keyring.SaveSettings(c.Dir, s); err != nil {
		return clierr.WithExit(clierr.ExitStorage, err)
	}
	ui := cmdutil.NewUI(f)
	ui.Success("storage set to %s (in %s)", opts.Value, c.SettingsPath())
	if opts.Value != keyring.StorageFile {
		moveFileLogins(f, c.Dir)
	}
	if c.Overridden {
		ui.Warn("--storage / MCPAUTH_STORAGE (%s) overrides it while set", c.Storage)
	}
	return nil
}
