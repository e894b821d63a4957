// Package root assembles the mcpauth command tree and decides exit codes.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/conformance"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/cmd/version"
)

// Main runs the CLI with the process's environment and returns the exit code.
func Main(args []string) int {
	f := &cmdutil.Factory{IO: cmdutil.System(os.Getenv), Getenv: os.Getenv}
	return Run(context.Background(), f, args)
}

// Run executes args against factory f and returns the exit code.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.ErrOut)
	cmd.SetErr(f.IO.ErrOut)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := ExitCode(err)
	if !errors.Is(err, cmdutil.ErrSilent) {
		fmt.Fprintf(f.IO.ErrOut, "mcpauth: %v\n", err)
	}
	return code
}

// ExitCode maps an error to the documented exit codes.
func ExitCode(err error) int {
	var ee *cmdutil.ExitError
	switch {
	case err == nil:
		return cmdutil.ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return cmdutil.ExitCancelled
	}
	if isUsageError(err) {
		return cmdutil.ExitUsage
	}
	return cmdutil.ExitFailure
}

// NewCmd builds the command tree.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpauth",
		Short: "OAuth for MCP servers: log in, check conformance, run a reference server",
		Long: `mcpauth logs in to OAuth-protected MCP servers, checks that a server
implements the mcpauth service contract, and runs a reference server.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		conformance.NewCmd(f, nil),
		serve.NewCmd(f, nil),
		version.NewCmd(f),
	)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.FlagErrorf("%v\nRun '%s --help' for usage.", err, c.CommandPath())
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
