// Package bench implements `mcpauth bench`: flags and files around
// internal/bench, which measures.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/bench"
)

// Options are bench's flags.
type Options struct {
	IO *cmdutil.IOStreams
	bench.Options
	JSON     string // file for the JSON report ("-": stdout)
	Markdown string
	Chart    string // SVG file
}

// NewCmd builds the command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO}
	var token *cmdutil.SecretFlag
	cmd := &cobra.Command{
		Use:   "bench [<base-url>]",
		Short: "Measure what authentication costs per request, against a bare handler",
		Long: `Load, one after another and for several rounds: a bare net/http handler
(the baseline), GET /api/ping with a JWT, with an API key, code exchanges at
/oauth/token, device-token polls and device code requests. For each: requests
per second, p50, p99, errors and the ratio to the baseline of the same round;
the report gives medians over rounds. Only ratios are comparable across
machines.

Without an argument it runs the reference server in-process on loopback
(SQLite in a temp dir, or --db) and obtains real credentials through the real
flows. With a base URL and --token it measures only the ping paths of that
deployment (the baseline still runs locally).`,
		Example: `  mcpauth bench
  mcpauth bench --rounds 5 --json bench.json
  mcpauth bench --markdown BENCHMARKS.md --chart BENCHMARKS.svg
  mcpauth token | mcpauth bench https://mcp.example.com --token -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := token.Resolve(f.IO.In, f.Getenv); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Target = strings.TrimSuffix(args[0], "/")
				if opts.Token == "" {
					return cmdutil.FlagErrorf("a remote target needs --token (a JWT or API key)")
				}
			}
			if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
				return cmdutil.FlagErrorf("--rounds, --concurrency and --duration must be positive")
			}
			return run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	token = cmdutil.BindSecret(fl, &opts.Token, "token", "credential for a remote target")
	fl.StringVar(&opts.DB, "db", "", "SQLite file for the in-process server (default: a temp dir)")
	fl.IntVar(&opts.Rounds, "rounds", 3, "rounds; each loads every path once")
	fl.DurationVar(&opts.Duration, "duration", 2*time.Second, "load time per path per round")
	fl.IntVar(&opts.Concurrency, "concurrency", 16, "closed-loop workers (keep-alive connections)")
	fl.StringVar(&opts.JSON, "json", "", "write the JSON report to this file (- for stdout)")
	fl.StringVar(&opts.Markdown, "markdown", "", "write a BENCHMARKS.md-style report to this file")
	fl.StringVar(&opts.Chart, "chart", "", "write an SVG bar chart of the ratios to this file")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	bo := opts.Options
	bo.Progress = func(format string, args ...any) { fmt.Fprintf(opts.IO.ErrOut, format+"\n", args...) }
	rep, err := bench.Run(ctx, bo)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(opts.IO.Out); err != nil {
		return err
	}
	if opts.JSON != "" {
		b, err := rep.JSON()
		if err != nil {
			return err
		}
		if err := writeFile(opts, opts.JSON, b); err != nil {
			return err
		}
	}
	if opts.Chart != "" {
		if err := writeFile(opts, opts.Chart, rep.SVG()); err != nil {
			return err
		}
	}
	if opts.Markdown != "" {
		old, _ := os.ReadFile(opts.Markdown) // absent: nothing hand-written to keep
		if err := writeFile(opts, opts.Markdown, rep.Markdown(chartLink(opts.Markdown, opts.Chart), old)); err != nil {
			return err
		}
	}
	return nil
}

// chartLink is the chart's path as the Markdown file links it.
func chartLink(markdown, chart string) string {
	if chart == "" || chart == "-" {
		return ""
	}
	if rel, err := filepath.Rel(filepath.Dir(markdown), chart); err == nil {
		return filepath.ToSlash(rel)
	}
	return chart
}

func writeFile(opts *Options, name string, b []byte) error {
	if name == "-" {
		_, err := opts.IO.Out.Write(b)
		return err
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
