package config

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
)

// GetOptions are `config get`'s arguments.
type GetOptions struct {
	F   *cmdutil.Factory
	Key string // "" lists every setting
}

func newGetCmd(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{F: f}
	return &cobra.Command{
		Use:     "get [<key>]",
		Short:   "Print a setting, or every setting",
		Example: "  mcpauth config get storage\n  mcpauth config get -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Key = args[0]
				if err := checkKey(opts.Key); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return GetRun(opts)
		},
	}
}

// GetRun prints one setting's value (its reason and date on stderr), or a
// list of every setting.
func GetRun(opts *GetOptions) error {
	f := opts.F
	want := keys
	if opts.Key != "" {
		want = []string{opts.Key}
	}
	settings := make([]Setting, 0, len(want))
	for _, k := range want {
		s, err := read(f, k)
		if err != nil {
			return err
		}
		settings = append(settings, s)
	}
	switch {
	case f.Globals.JSON() && opts.Key != "":
		return cmdutil.WriteJSON(f.IO.Out, settings[0])
	case f.Globals.JSON():
		return cmdutil.WriteJSON(f.IO.Out, settings)
	case opts.Key != "":
		if _, err := fmt.Fprintln(f.IO.Out, settings[0].Value); err != nil {
			return err
		}
		if d := describe(settings[0]); d != "" {
			cmdutil.NewUI(f).Info("(%s)", d)
		}
		return nil
	}
	for _, s := range settings {
		line := s.Key + "=" + s.Value
		if d := describe(s); d != "" {
			line += "  # " + d
		}
		if _, err := fmt.Fprintln(f.IO.Out, line); err != nil {
			return err
		}
	}
	return nil
}
