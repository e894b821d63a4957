package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/internal/secretflag"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
	"github.com/mcpauth/mcpauth/tools/bench/internal/bench"
)

// options are the tool's flags.
type options struct {
	bench.Options
	Mcpauth    string // the binary under test; empty: built from this module
	JSON       string // file for the JSON report ("-": stdout)
	Markdown   string
	Chart      string // SVG file
	Mode       string
	Pin        string // "server CPUs:load CPUs", e.g. "1:0"
	SQLiteSync string // --sqlite-sync: normal or full
	// BaselineServer runs only the bare baseline, as the child process of
	// the out-of-process mode (hidden flag, bench.BaselineArg).
	BaselineServer bool
	out, errOut    io.Writer
}

// newCmd builds the command; in, out, errOut and getenv are the process's.
func newCmd(in io.Reader, out, errOut io.Writer, getenv func(string) string) *cobra.Command {
	opts := &options{out: out, errOut: errOut}
	var token *secretflag.SecretFlag
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
default it measures twice: out-of-process (the baseline, served by this tool,
and ` + "`mcpauth serve`" + ` as child processes, the load generator alone in this
one; the honest numbers, used for --markdown and --chart) and in-process
(all in one Go runtime). The mcpauth binary is --mcpauth, or one built from
this module's ./cmd/mcpauth into a temp dir. --pin 1:0 pins, on Linux, the
servers to CPU 1 and the load generator to CPU 0. With a base URL and --token
it measures only the ping paths of that deployment (the baseline still runs
locally).

--scale-pending N,… measures only this: N pending device flows seeded into a
fresh database (not requested one by one), a sample polled open loop at
--sample-rate, the server's RSS, and its collection of the flows once they
expire, with polls and device code requests going on (BENCHMARKS.md, "A
million pending device flows").`,
		Example: `  go run ./tools/bench
  go run ./tools/bench --rounds 5 --json bench.json
  go run ./tools/bench --markdown BENCHMARKS.md --chart BENCHMARKS.svg
  go run ./tools/bench --mcpauth ./mcpauth --mode out-of-process --only ping
  go run ./tools/bench --scale-pending 10000,100000,1000000 --sample-rate 2000
  mcpauth token | go run ./tools/bench https://mcp.example.com --token -`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true, // main prints them once
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.BaselineServer {
				return bench.ServeBaseline(cmd.Context(), out)
			}
			if err := token.Resolve(in, getenv); err != nil {
				return err
			}
			if err := opts.check(args); err != nil {
				return err
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErrorf("%v", err) })
	fl := cmd.Flags()
	token = secretflag.Bind(fl, &opts.Token, "token", "credential for a remote target")
	fl.StringVar(&opts.Mcpauth, "mcpauth", "", "the mcpauth binary to measure (default: go build ./cmd/mcpauth of this module into a temp dir)")
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
	fl.IntSliceVar(&opts.ScalePending, "scale-pending", nil, "instead, on Linux, seed this many pending device flows into a fresh database of mcpauth serve (SQLite, then --postgres), poll a sample, and time their collection once expired; one run per number (e.g. 10000,100000,1000000)")
	fl.IntVar(&opts.SampleRate, "sample-rate", 2000, "--scale-pending: polls a second, open loop, each of a flow drawn at random")
	fl.DurationVar(&opts.SampleDuration, "sample-duration", 30*time.Second, "--scale-pending: how long the sample is polled while every flow is pending")
	fl.DurationVar(&opts.GCInterval, "gc-interval", 10*time.Second, "--scale-pending: the server's --gc-interval")
	fl.StringVar(&opts.Only, "only", "", "measure only the paths whose name contains this (and the baseline)")
	fl.BoolVar(&opts.BaselineServer, strings.TrimPrefix(bench.BaselineArg, "--"), false, "serve only the bare baseline (the out-of-process child)")
	_ = fl.MarkHidden(strings.TrimPrefix(bench.BaselineArg, "--"))
	return cmd
}

// check validates the flags and the argument and fills the engine's
// options they map to.
func (opts *options) check(args []string) error {
	modes, err := bench.ParseMode(opts.Mode)
	if err != nil {
		return usageErrorf("--mode: %v", err)
	}
	opts.Modes = modes
	if opts.ServerCPUs, opts.LoadCPUs, err = parsePin(opts.Pin); err != nil {
		return usageErrorf("--pin: %v", err)
	}
	if len(args) == 1 {
		opts.Target = strings.TrimSuffix(args[0], "/")
		if opts.Token == "" {
			return usageErrorf("a remote target needs --token (a JWT or API key)")
		}
	}
	if opts.Postgres != "" && !sqlstore.IsPostgres(opts.Postgres) {
		return usageErrorf("--postgres wants a postgres:// URL")
	}
	if opts.SQLiteFullSync, err = sqlstore.ParseSQLiteSync(opts.SQLiteSync); err != nil {
		return usageErrorf("--sqlite-sync: %v", err)
	}
	if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
		return usageErrorf("--rounds, --concurrency and --duration must be positive")
	}
	if len(opts.ScalePending) > 0 && (opts.SampleRate < 1 || opts.SampleDuration <= 0 || opts.GCInterval <= 0 || slices.Min(opts.ScalePending) < 1) {
		return usageErrorf("--scale-pending, --sample-rate, --sample-duration and --gc-interval must be positive")
	}
	return nil
}

// run finds the binaries the child processes run, measures, and writes
// the reports.
func run(ctx context.Context, opts *options) error {
	bo := opts.Options
	bo.Progress = func(format string, args ...any) { fmt.Fprintf(opts.errOut, format+"\n", args...) }
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to serve the baseline: %w", err)
	}
	bo.Baseline = self
	if needsMcpauth(bo) {
		exe, cleanup, err := mcpauthBinary(ctx, opts.Mcpauth, bo.Progress)
		if err != nil {
			return err
		}
		defer cleanup()
		bo.Exe = exe
	}
	if len(bo.ScalePending) > 0 {
		return runPending(ctx, opts, bo)
	}
	reps, err := bench.Run(ctx, bo)
	if err != nil {
		return err
	}
	for _, rep := range reps {
		if err := rep.WriteTable(opts.out); err != nil {
			return err
		}
	}
	rep := reps[0] // out-of-process when it ran
	if len(opts.DeviceFlows) > 0 {
		if rep.Scale, err = bench.RunScale(ctx, bo); err != nil {
			return fmt.Errorf("device flows: %w", err)
		}
	}
	return opts.write(reps)
}

// runPending runs only the pending mode and prints its table (BENCHMARKS.md
// quotes it by hand); --json writes its results.
func runPending(ctx context.Context, opts *options, bo bench.Options) error {
	rs, err := bench.RunPending(ctx, bo)
	if err != nil {
		return err
	}
	if opts.JSON != "" {
		b, err := json.MarshalIndent(rs, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the results: %w", err)
		}
		if err := opts.writeFile(opts.JSON, append(b, '\n')); err != nil {
			return err
		}
	}
	return bench.WritePending(opts.out, pendingCommand(bo), rs)
}

// pendingCommand is the command line that measures rs again.
func pendingCommand(o bench.Options) string {
	ns := make([]string, len(o.ScalePending))
	for i, n := range o.ScalePending {
		ns[i] = strconv.Itoa(n)
	}
	cmd := fmt.Sprintf("go run ./tools/bench --scale-pending %s --sample-rate %d --sample-duration %s --gc-interval %s",
		strings.Join(ns, ","), o.SampleRate, o.SampleDuration, o.GCInterval)
	if o.Postgres != "" {
		return "scripts/with-postgres.sh sh -c '" + cmd + ` --postgres "$MCPAUTH_TEST_POSTGRES_URL"'`
	}
	return cmd
}
