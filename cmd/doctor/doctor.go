// Package doctor implements `mcpauth doctor`: check the user's setup (token
// storage, browser, proxy, CAs and, given a URL, the server) and say how to
// fix what is wrong.
package doctor

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/textwrap"
)

// Options are doctor's arguments and everything it reads from the outside
// world, so tests run it with their own environment, clock and client.
type Options struct {
	F          *cmdutil.Factory // token storage and the global flags
	IO         *cmdutil.IOStreams
	Getenv     func(string) string
	Clock      flows.Clock
	HTTPClient func() (*http.Client, error)
	GOOS       string
	LookPath   func(string) (string, error)
	Target     string // optional MCP URL
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor [<mcp-url>]",
		Short: "Check token storage, browser, proxy and CA setup, and a server if given",
		Long: `Check this machine's setup for mcpauth and print one line per check:
✓ pass, ! warning, ✗ failure, each problem with the command or setting that
fixes it. With an MCP URL, also check that the server is reachable, that the
clocks agree, what discovery finds and the state of the stored credential.
Nothing is ever prompted for. Exits 0 unless a check failed (warnings do not).`,
		Example: "  mcpauth doctor\n  mcpauth doctor http://127.0.0.1:8080/mcp --output json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Filled here, not at build time: tests adjust the factory late.
			opts := &Options{F: f, IO: f.IO, Getenv: f.Getenv, Clock: f.Clock, HTTPClient: f.HTTPClient, GOOS: runtime.GOOS, LookPath: exec.LookPath}
			if len(args) == 1 {
				opts.Target = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Status is a check's outcome.
type Status string

const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one line of the report.
type Check struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// checkTimeout bounds each check that waits on something outside.
const checkTimeout = 10 * time.Second

// Run runs every check, prints the report and fails (exit 1) when a check
// failed.
func Run(ctx context.Context, opts *Options) error {
	var target string
	if opts.Target != "" {
		var err error
		if target, err = cmdutil.ParseTarget(opts.Target); err != nil {
			return err
		}
	}
	checks := []Check{tokenFiles(opts), keyringCheck(ctx, opts), browserCheck(opts, target), proxyCheck(opts, target), caCheck(opts)}
	if target != "" {
		checks = append(checks, serverChecks(ctx, opts, target)...)
	}
	if err := write(opts, checks); err != nil {
		return err
	}
	for _, c := range checks {
		if c.Status == Fail {
			return clierr.SilentExit(clierr.ExitFailure)
		}
	}
	return nil
}

var marks = map[Status]string{Pass: "✓", Warn: "!", Fail: "✗"}

func write(opts *Options, checks []Check) error {
	if opts.F.Globals.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, checks)
	}
	width := opts.IO.TerminalWidth()
	for _, c := range checks {
		// Details quote servers and the environment: never let them drive
		// the terminal.
		if _, err := fmt.Fprintln(opts.IO.Out, checkText(c, width)); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	}
	return nil
}

// checkText is one check as text. Within width columns (COLUMNS, or a
// terminal's) the detail wraps under the check's name and the fix starts a
// line of its own; with no width (a pipe, a CI log) each check is one line,
// for grep.
func checkText(c Check, width int) string {
	head := cmdutil.Text(fmt.Sprintf("%s: %s", c.ID, c.Detail))
	if width < 1 {
		line := marks[c.Status] + " " + head
		if c.Fix != "" {
			line += "; fix: " + cmdutil.Text(c.Fix)
		}
		return line
	}
	const indent = "  " // the mark and its space are two columns
	lines := textwrap.Words(head, width-len(indent))
	if c.Fix != "" {
		lines = append(lines, textwrap.Words("fix: "+cmdutil.Text(c.Fix), width-len(indent))...)
	}
	return marks[c.Status] + " " + strings.Join(lines, "\n"+indent)
}
