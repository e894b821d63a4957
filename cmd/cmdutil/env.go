package cmdutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/secretflag"
)

// BindEnv gives every flag of cmd that was not set on the command line the
// value of MCPAUTH_<FLAG_NAME> (dashes become underscores), if set. The
// command line wins, then the environment, then the default.
func BindEnv(cmd *cobra.Command, getenv func(string) string) error {
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil {
			return
		}
		name := EnvName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			firstErr = clierr.FlagErrorf("%s: %v", name, err)
			return
		}
		f.Changed = true
	})
	return firstErr
}

// EnvName is the environment variable that sets flag name.
func EnvName(flag string) string { return secretflag.EnvName(flag) }

// DocumentEnv appends "(env MCPAUTH_X)" to every flag's usage so --help
// shows the environment variable beside the flag.
func DocumentEnv(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Usage, "env "+EnvName(f.Name)) {
			return // secret flags say it already
		}
		f.Usage = fmt.Sprintf("%s (env %s)", f.Usage, EnvName(f.Name))
	})
}

// RunE is the RunE of a command built as NewCmd(f, runF): it puts the
// command's one positional argument, when given, in *arg (nil for a
// command that takes none), then runs runF (a test's) or else run, with
// the command's context. Checks that must fail before runF go in PreRunE.
func RunE[O any](opts *O, arg *string, runF, run func(context.Context, *O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			*arg = args[0]
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
}
