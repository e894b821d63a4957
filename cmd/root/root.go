// Package root assembles the mcpauth command tree and decides exit codes.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/apikey"
	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/completion"
	"github.com/mcpauth/mcpauth/cmd/config"
	"github.com/mcpauth/mcpauth/cmd/conformance"
	"github.com/mcpauth/mcpauth/cmd/device"
	"github.com/mcpauth/mcpauth/cmd/discover"
	"github.com/mcpauth/mcpauth/cmd/doctor"
	"github.com/mcpauth/mcpauth/cmd/host"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/login"
	"github.com/mcpauth/mcpauth/cmd/logout"
	"github.com/mcpauth/mcpauth/cmd/ping"
	"github.com/mcpauth/mcpauth/cmd/proxy"
	"github.com/mcpauth/mcpauth/cmd/register"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/cmd/status"
	"github.com/mcpauth/mcpauth/cmd/token"
	"github.com/mcpauth/mcpauth/cmd/version"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// Main runs the CLI with the process's environment and returns the exit
// code; version is the release version the binary was built with, or "".
func Main(args []string, version string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f := cmdutil.New(iostreams.System(os.Getenv), os.Getenv)
	f.Version = version
	return Run(ctx, f, args)
}

// Run executes args against factory f and returns the exit code.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	cmd := newCmd(f, args)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out) // help, which people pipe to less
	cmd.SetErr(f.IO.ErrOut)
	ran, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return clierr.ExitOK
	}
	code := ExitCode(err)
	if errors.Is(err, context.Canceled) && ran != nil {
		// Commands that name what they interrupted return their own error;
		// for the rest, never the bare "context canceled".
		err = fmt.Errorf("%s cancelled", strings.TrimPrefix(ran.CommandPath(), "mcpauth "))
	}
	if !errors.Is(err, clierr.ErrSilent) {
		if f.IO.StderrTTY {
			// Ctrl-C may land on a spinner or prompt line (and the
			// terminal echoes ^C there): start the message on a clean one.
			fmt.Fprint(f.IO.ErrOut, "\r\033[K")
		}
		// Errors quote servers (error_description, bodies): never let them
		// drive the terminal.
		fmt.Fprintf(f.IO.ErrOut, "mcpauth: %s\n", cmdutil.Text(clierr.WithFix(err).Error()))
	}
	return code
}

// ExitCode maps an error to the documented exit codes.
func ExitCode(err error) int {
	var ee *clierr.ExitError
	switch {
	case err == nil:
		return clierr.ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return clierr.ExitCancelled
	}
	// Typed errors first: cobra's usage errors are recognised by their
	// text, which a server's message may contain ("no longer accepts").
	if code := clierr.CodeFor(err); code != clierr.ExitFailure || !isUsageError(err) {
		return code
	}
	return clierr.ExitUsage
}

// subcommand is one top-level command: its name, as the first word of
// its Use, and how to build it.
type subcommand struct {
	name  string
	build func(*cmdutil.Factory) *cobra.Command
}

// subcommands are the top-level commands, in the order help lists them.
func subcommands() []subcommand {
	return []subcommand{
		{"discover", func(f *cmdutil.Factory) *cobra.Command { return discover.NewCmd(f, nil) }},
		{"register", func(f *cmdutil.Factory) *cobra.Command { return register.NewCmd(f, nil) }},
		{"login", func(f *cmdutil.Factory) *cobra.Command { return login.NewCmd(f, nil) }},
		{"device", func(f *cmdutil.Factory) *cobra.Command { return device.NewCmd(f, nil) }},
		{"ping", func(f *cmdutil.Factory) *cobra.Command { return ping.NewCmd(f, nil) }},
		{"proxy", func(f *cmdutil.Factory) *cobra.Command { return proxy.NewCmd(f, nil) }},
		{"host", func(f *cmdutil.Factory) *cobra.Command { return host.NewCmd(f, nil, nil, nil) }},
		{"token", func(f *cmdutil.Factory) *cobra.Command { return token.NewCmd(f, nil) }},
		{"status", func(f *cmdutil.Factory) *cobra.Command { return status.NewCmd(f, nil) }},
		{"doctor", func(f *cmdutil.Factory) *cobra.Command { return doctor.NewCmd(f, nil) }},
		{"logout", func(f *cmdutil.Factory) *cobra.Command { return logout.NewCmd(f, nil) }},
		{"apikey", func(f *cmdutil.Factory) *cobra.Command { return apikey.NewCmd(f, nil) }},
		{"config", func(f *cmdutil.Factory) *cobra.Command { return config.NewCmd(f, nil, nil) }},
		{"conformance", func(f *cmdutil.Factory) *cobra.Command { return conformance.NewCmd(f, nil) }},
		{"serve", func(f *cmdutil.Factory) *cobra.Command { return serve.NewCmd(f, nil) }},
		{"version", version.NewCmd},
		{"completion", completion.NewCmd},
	}
}

// NewCmd builds the command tree.
func NewCmd(f *cmdutil.Factory) *cobra.Command { return newCmd(f, nil) }

// newCmd builds the tree args run in. When args start with a command's
// name, only that command is built: building the others, with all
// their flags, was a measurable part of every run's start-up. Anything else
// (flags first, help, an unknown or misspelt name, which cobra answers with
// suggestions) gets the whole tree, and so does completion, which walks it.
func newCmd(f *cmdutil.Factory, args []string) *cobra.Command {
	root := newRoot(f)
	all := subcommands()
	for _, sc := range all {
		if len(args) > 0 && args[0] == sc.name && sc.name != "completion" {
			root.AddCommand(sc.build(f))
			return root
		}
	}
	for _, sc := range all {
		root.AddCommand(sc.build(f))
	}
	return root
}

// newRoot builds the root command, with no subcommands.
func newRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpauth",
		Short: "OAuth for MCP servers: log in, check conformance, run a reference server",
		Long: `mcpauth logs in to OAuth-protected MCP servers, checks that a server
implements the mcpauth service contract, and runs a reference server.`,
		// --version prints what `mcpauth version` does.
		Version:       version.Read(f.Version).String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Ours writes the script to stdout (see package completion).
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	if f.Globals == nil {
		f.Globals = &cmdutil.Globals{}
	}
	g := f.Globals
	pf := root.PersistentFlags()
	pf.StringVarP(&g.Output, "output", "o", "text", "output format: text or json (env MCPAUTH_OUTPUT)")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "print only data and errors")
	pf.BoolVar(&g.Debug, "debug", false, "trace HTTP on stderr, with every secret redacted")
	pf.StringVar(&g.CAFile, "ca-file", "", "PEM file of extra CA certificates to trust (env MCPAUTH_CA_FILE)")
	pf.StringVar(&g.Storage, "storage", "auto", "token storage: auto, keyring or file (env MCPAUTH_STORAGE)")
	pf.StringVar(&g.Account, "account", "default", "account name, to keep several logins per server (env MCPAUTH_ACCOUNT)")
	pf.StringVar(&g.ConfigDir, "config-dir", "", "folder of the token files and settings (env MCPAUTH_CONFIG_DIR; default: the user config folder)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		for _, name := range []string{"output", "ca-file", "storage", "account", "config-dir"} {
			fl := cmd.Flags().Lookup(name)
			if fl != nil && !fl.Changed {
				if v := f.Getenv(cmdutil.EnvName(name)); v != "" {
					if err := fl.Value.Set(v); err != nil {
						return clierr.FlagErrorf("%s: %v", cmdutil.EnvName(name), err)
					}
					fl.Changed = true
				}
			}
		}
		// Only a given --storage overrides the remembered choice; the
		// flag's default does not.
		if fl := cmd.Flags().Lookup("storage"); fl != nil {
			g.StorageSet = fl.Changed
		}
		if g.Output != "text" && g.Output != "json" {
			return clierr.FlagErrorf("--output must be text or json")
		}
		return nil
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// Defined here, not by cobra, to leave -v free and say what it prints.
	root.Flags().Bool("version", false, "print the version, commit and Go version (as mcpauth version does)")
	setHelp(root, helpWidth(f.IO.Width))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if hint := suggestFlags(c, err); hint != "" {
			return clierr.FlagErrorf("%v: %s\nRun '%s --help' for usage.", err, hint, c.CommandPath())
		}
		return clierr.FlagErrorf("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	return root
}

func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
