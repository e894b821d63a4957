// Package bench implements `mcpauth bench`: flags and files around
// internal/bench, which measures.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/bench"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Options are bench's flags.
type Options struct {
	IO *cmdutil.IOStreams
	bench.Options
	JSON       string // file for the JSON report ("-": stdout)
	Markdown   string
	Chart      string // SVG file
	Mode       string
	Pin        string // "server CPUs:load CPUs", e.g. "1:0"
	SQLiteSync string // --sqlite-sync: normal or full
	// BaselineServer runs only the bare baseline, as the child process of
	// the out-of-process mode (hidden flag).
	BaselineServer bool
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

Without an argument it runs the reference server on loopback (SQLite in a
temp dir, or --db) and obtains real credentials through the real flows. By
default it measures twice: out-of-process (the baseline and ` + "`mcpauth serve`" + ` as
child processes of this binary, the load generator alone in this one; the
honest numbers, used for --markdown and --chart) and in-process (all in one Go
runtime). --pin 1:0 pins, on Linux, the servers to CPU 1 and the load
generator to CPU 0. With a base URL and --token it measures only the ping paths of that
deployment (the baseline still runs locally).`,
		Example: `  mcpauth bench
  mcpauth bench --rounds 5 --json bench.json
  mcpauth bench --markdown BENCHMARKS.md --chart BENCHMARKS.svg
  mcpauth token | mcpauth bench https://mcp.example.com --token -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.BaselineServer {
				return bench.ServeBaseline(cmd.Context(), opts.IO.Out)
			}
			modes, err := bench.ParseMode(opts.Mode)
			if err != nil {
				return cmdutil.FlagErrorf("--mode: %v", err)
			}
			opts.Modes = modes
			if opts.ServerCPUs, opts.LoadCPUs, err = parsePin(opts.Pin); err != nil {
				return cmdutil.FlagErrorf("--pin: %v", err)
			}
			if exe, err := os.Executable(); err == nil && !isTestBinary(exe) {
				opts.Exe = exe
			} else if len(modes) == 1 && modes[0] == bench.OutOfProcess {
				return cmdutil.FlagErrorf("--mode out-of-process: cannot find the mcpauth binary to run as a child")
			}
			if err := token.Resolve(f.IO.In, f.Getenv); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Target = strings.TrimSuffix(args[0], "/")
				if opts.Token == "" {
					return cmdutil.FlagErrorf("a remote target needs --token (a JWT or API key)")
				}
			}
			if opts.Postgres != "" && !sqlstore.IsPostgres(opts.Postgres) {
				return cmdutil.FlagErrorf("--postgres wants a postgres:// URL")
			}
			full, err := sqlstore.ParseSQLiteSync(opts.SQLiteSync)
			if err != nil {
				return cmdutil.FlagErrorf("--sqlite-sync: %v", err)
			}
			opts.SQLiteFullSync = full
			if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
				return cmdutil.FlagErrorf("--rounds, --concurrency and --duration must be positive")
			}
			return run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	token = cmdutil.BindSecret(fl, &opts.Token, "token", "credential for a remote target")
	fl.StringVar(&opts.DB, "db", "", "SQLite file for the reference server (default: a temp dir)")
	fl.StringVar(&opts.SQLiteSync, "sqlite-sync", "normal", "the reference server's SQLite commits: normal or full (as serve --sqlite-sync)")
	fl.StringVar(&opts.Postgres, "postgres", "", "also measure the reference server on this postgres:// database (PostgreSQL columns in --markdown)")
	fl.IntVar(&opts.Rounds, "rounds", 3, "rounds; each loads every path once")
	fl.DurationVar(&opts.Duration, "duration", 2*time.Second, "load time per path per round")
	fl.IntVar(&opts.Concurrency, "concurrency", 16, "closed-loop workers (keep-alive connections)")
	fl.StringVar(&opts.JSON, "json", "", "write the JSON report to this file (- for stdout)")
	fl.StringVar(&opts.Markdown, "markdown", "", "write a BENCHMARKS.md-style report to this file")
	fl.StringVar(&opts.Chart, "chart", "", "write an SVG bar chart of the ratios to this file")
	fl.StringVar(&opts.Mode, "mode", "both", "where the servers run: out-of-process, in-process or both")
	fl.StringVar(&opts.Pin, "pin", "", "out-of-process, Linux: pin servers and load generator to CPUs, as SERVER:LOAD lists (e.g. 1:0 or 2,3:0,1)")
	fl.IntSliceVar(&opts.DeviceFlows, "device-flows", nil, "then, on Linux, poll this many device flows at once on a fresh mcpauth serve (SQLite), one run per number (e.g. 1000,5000,10000)")
	fl.DurationVar(&opts.FlowDuration, "flow-duration", 30*time.Second, "how long the device flows poll")
	fl.StringVar(&opts.Only, "only", "", "measure only the paths whose name contains this (and the baseline)")
	fl.BoolVar(&opts.BaselineServer, "baseline-server", false, "serve only the bare baseline (the out-of-process child)")
	_ = fl.MarkHidden("baseline-server")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	bo := opts.Options
	bo.Progress = func(format string, args ...any) { fmt.Fprintf(opts.IO.ErrOut, format+"\n", args...) }
	reps, err := bench.Run(ctx, bo)
	if err != nil {
		return err
	}
	for _, rep := range reps {
		if err := rep.WriteTable(opts.IO.Out); err != nil {
			return err
		}
	}
	rep := reps[0] // out-of-process when it ran
	if len(opts.DeviceFlows) > 0 {
		if rep.Scale, err = bench.RunScale(ctx, bo); err != nil {
			return fmt.Errorf("device flows: %w", err)
		}
	}
	if opts.JSON != "" {
		b, err := bench.JSONAll(reps)
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
		if err := writeFile(opts, opts.Markdown, rep.Markdown(chartLink(opts.Markdown, opts.Chart), old, reps[1:]...)); err != nil {
			return err
		}
	}
	return nil
}

// parsePin reads SERVER:LOAD CPU lists.
func parsePin(s string) (server, load []int, err error) {
	if s == "" {
		return nil, nil, nil
	}
	if !bench.PinSupported {
		return nil, nil, fmt.Errorf("CPU pinning is only supported on Linux")
	}
	sv, ld, ok := strings.Cut(s, ":")
	if !ok {
		return nil, nil, fmt.Errorf("want SERVER:LOAD CPU lists, e.g. 1:0")
	}
	if server, err = cpuList(sv); err != nil {
		return nil, nil, err
	}
	load, err = cpuList(ld)
	return server, load, err
}

func cpuList(s string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("bad CPU number %q", f)
		}
		cpus = append(cpus, c)
	}
	return cpus, nil
}

// isTestBinary: a `go test` binary has no serve command to re-execute.
func isTestBinary(exe string) bool {
	return strings.HasSuffix(strings.TrimSuffix(exe, ".exe"), ".test")
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
