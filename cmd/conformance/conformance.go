// Package conformance implements `mcpauth conformance`: run the conformance
// suite against a deployment, or against the reference server in-process.
package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/report"
	"github.com/mcpauth/mcpauth/internal/secretflag"
)

// Approval modes of --approve.
const (
	ApproveForm   = "form"
	ApproveManual = "manual"
	ApproveNone   = "none"
	// ApproveBrowser: headless Chromium signs in once (--username,
	// --password) or a person does in its window (--headed).
	ApproveBrowser = "browser"
)

// passwordEnv sets --password: MCPAUTH_PASSWORD would be too common a
// name to claim.
const passwordEnv = "MCPAUTH_CONFORMANCE_PASSWORD"

// manualTimeout is the per-check timeout when a person approves: long enough
// to switch to a browser, sign in and paste a URL back.
const manualTimeout = 10 * time.Minute

// Options are conformance's flags.
type Options struct {
	IO         *cmdutil.IOStreams
	Getenv     func(string) string
	HTTPClient func() (*http.Client, error) // nil: the suite's defaults

	BaseURL string // the positional argument

	Local   bool
	DB      string
	Profile string // contract (default) or mcp

	ClockURL      string
	SessionCookie string
	APIKey        string
	Approve       string
	Username      string
	// Password, Headed and Chromium are --approve=browser's.
	Password string
	Headed   bool
	Chromium string
	// BrowserCommand approves through the user's own program (the contract
	// of login --browser-command); it replaces --approve.
	BrowserCommand string
	Destructive    bool
	RealTime       bool
	// CIMDPrivate: the target fetches client metadata documents from the
	// suite's loopback document host; on by default with --local.
	CIMDPrivate bool
	CIMDCert    string // PEM certificate and key the document host serves with
	CIMDKey     string
	// Pre-registered clients, for an authorization server without dynamic
	// registration (--profile mcp): the second for the checks that need two.
	ClientID, ClientSecret   string
	ClientID2, ClientSecret2 string
	// The operator's machine clients, for the client credentials checks.
	MachineClientID, MachineClientSecret      string
	MachineKeyClientID, MachinePrivateKeyFile string
	AllowInsecureKeyFile                      bool // secret files others may read

	Timeout  time.Duration // per check; 0: 60 s, or 10 min with --approve=manual
	Parallel int           // 0: the suite's default, 1 with --approve=manual

	JSON     string // file or "-"
	JUnit    string // file or "-"
	HTML     string // file or "-"
	List     bool
	Run      string // regular expression over check IDs
	Baseline string
	Verbose  bool
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Getenv: f.Getenv, HTTPClient: f.HTTPClient}
	// The secrets may come from a file, standard input or the environment
	// (MCPAUTH_SESSION_COOKIE, MCPAUTH_API_KEY) so CI secrets stay off the
	// command line. Other flags are not bound to the environment:
	// MCPAUTH_DB and friends belong to `mcpauth serve`, often run in the
	// same CI job.
	var secrets []*cmdutil.SecretFlag
	cmd := &cobra.Command{
		Use:   "conformance [<base_url>]",
		Short: "Check a deployment against the service contract",
		Long: `Run the conformance suite: every rule of the service contract (docs/service.md)
and of docs/decisions.md, one check each, over HTTP against <base_url>.

Checks that need something the target cannot provide are skipped with the
reason, never passed: approving consent screens and device codes (--approve,
or --browser-command with a program that drives any sign-in page),
moving the server's clock for the expiry checks (--clock-url, from
'mcpauth serve --test-clock'; or --real-time to wait for real where that is
short enough), the test user's API key and browser session.

--profile mcp checks only what the MCP authorization specification asks of any
MCP server, discovering everything from the MCP endpoint (<base_url> is then
the MCP URL, e.g. https://example.com/mcp); checks that cannot apply to the
server are skipped with the reason.

--local runs the whole suite against the reference server started in-process,
with every need met.

Client ID Metadata Document checks serve documents from a TLS host the suite
starts on 127.0.0.1; they run when the target fetches from loopback and trusts
that host (--cimd-private: 'mcpauth serve --cimd-allow-private', trusting
--cimd-cert), and are skipped otherwise, when the SSRF guard is checked
instead. --local allows it unless --cimd-private=false.

A check whose setup the suite itself could not complete (its approver could
not drive the authorization server's sign-in page, or hung on it) is
inconclusive: the server was not judged there, the reason names the flag that
would run it (--approve=browser, --browser-command, --approve=manual), and it does not fail the
run. A check whose setup step another check reports (a refused registration,
a sign-in that gave no token) is blocked by that check: the failure is
reported once, there, and blocked checks do not fail the run.

--client-id (and --client-id-2 for the checks that need two clients) use
clients registered beforehand, for an authorization server without dynamic
registration; the checks that sign in then run one at a time.

Exit status: 0 when no Must check failed (after the baseline; warnings,
information, inconclusive and blocked checks included), 8 when one did or the baseline
is stale, 2 on usage errors, 6 when the target or its test
clock cannot be reached, 130 when interrupted.`,
		Example: `  mcpauth conformance --local
  mcpauth conformance http://127.0.0.1:8080 --clock-url http://127.0.0.1:8080/api/test/clock --approve=form
  mcpauth conformance https://mcp.example.com --api-key-file key.txt --junit conformance.xml
  mcpauth conformance --profile mcp https://mcp.example.com/mcp --browser-command ./formlogin --html report.html
  mcpauth conformance --list --run '^DEV-'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range secrets {
				if err := s.Resolve(f.IO.In, f.Getenv); err != nil {
					return err
				}
			}
			if len(args) == 1 {
				opts.BaseURL = args[0]
			}
			dropStraySecret(cmd.Flags(), opts.ClientID, &opts.ClientSecret, "client-secret")
			dropStraySecret(cmd.Flags(), opts.ClientID2, &opts.ClientSecret2, "client-secret-2")
			if opts.Approve != ApproveBrowser { // MCPAUTH_CONFORMANCE_PASSWORD, for another run
				dropStraySecret(cmd.Flags(), "", &opts.Password, "password")
			}
			if opts.Local && !cmd.Flags().Changed("cimd-private") {
				opts.CIMDPrivate = true
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Local, "local", false, "start the reference server in-process and check it (no <base_url>)")
	fl.StringVar(&opts.Profile, "profile", conformance.ProfileContract, "which requirements: contract (this project's contract and decisions) or mcp (the MCP authorization spec, for any MCP server; <base_url> is then the MCP endpoint)")
	fl.StringVar(&opts.DB, "db", "", "with --local: SQLite file or postgres:// URL for the server (default: in memory)")
	fl.StringVar(&opts.ClockURL, "clock-url", "", "test clock of 'mcpauth serve --test-clock', e.g. <base_url>/api/test/clock")
	secrets = append(secrets,
		cmdutil.BindSecret(fl, &opts.SessionCookie, "session-cookie", "auth_token cookie of a logged-in test user"),
		cmdutil.BindSecret(fl, &opts.APIKey, "api-key", "the test user's API key"))
	fl.StringVar(&opts.Approve, "approve", ApproveNone, "who approves consent and device codes: form (drive the pages as --username), browser (headless Chromium signs in once as --username with --password, or you in its window with --headed, then approves by itself), manual (you, prompted on stderr), none (skip those checks)")
	fl.StringVar(&opts.BrowserCommand, "browser-command", "", "program that drives a browser through sign-in and consent, as login's --browser-command: the authorization URL is its last argument, MCPAUTH_CONFORMANCE_ACTION is approve or deny, and it must bring the browser to the redirect URI (see conformance/drivers/formlogin)")
	fl.StringVar(&opts.Username, "username", "conformance", "user name to sign in with (--approve=form at a development identity provider, --approve=browser at any sign-in form)")
	secrets = append(secrets,
		cmdutil.BindSecret(fl, &opts.Password, "password", "with --approve=browser: the test user's password, sent only to the authorization server's origin over https or loopback").Env(passwordEnv))
	fl.BoolVar(&opts.Headed, "headed", false, "with --approve=browser: show the browser window and let you sign in there once; the suite then approves by itself")
	fl.StringVar(&opts.Chromium, "chromium", "", "with --approve=browser: the Chromium binary (default: $MCPAUTH_CHROMIUM, else chromium on PATH)")
	fl.BoolVar(&opts.Destructive, "destructive", false, "allow checks that change the test user's state (regenerating the API key)")
	fl.BoolVar(&opts.CIMDPrivate, "cimd-private", false, "the target fetches client metadata documents from loopback (serve --cimd-allow-private) and trusts the suite's document host (default true with --local)")
	fl.StringVar(&opts.CIMDCert, "cimd-cert", "", "PEM certificate for the suite's document host, one the target trusts (default: self-signed, trusted by --local only)")
	fl.StringVar(&opts.CIMDKey, "cimd-key", "", "PEM private key of --cimd-cert")
	fl.StringVar(&opts.ClientID, "client-id", "", "with --profile mcp: a pre-registered client to use instead of registering (for a server without dynamic registration); it must allow the suite's redirect URI, http://127.0.0.1:43117/callback")
	fl.StringVar(&opts.ClientID2, "client-id-2", "", "a second pre-registered client, for the checks that present what was issued to one client as another")
	secrets = append(secrets,
		cmdutil.BindSecret(fl, &opts.ClientSecret, "client-secret", "secret of the --client-id client, when it is confidential").Private(&opts.AllowInsecureKeyFile),
		cmdutil.BindSecret(fl, &opts.ClientSecret2, "client-secret-2", "secret of the --client-id-2 client").Private(&opts.AllowInsecureKeyFile))
	fl.StringVar(&opts.MachineClientID, "machine-client-id", "", "a machine client of the target (serve --machine-clients) with a secret, for the client credentials and DPoP checks (MACH-*)")
	secrets = append(secrets, cmdutil.BindSecret(fl, &opts.MachineClientSecret, "machine-client-secret", "secret of the --machine-client-id client").Private(&opts.AllowInsecureKeyFile))
	fl.StringVar(&opts.MachineKeyClientID, "machine-key-client-id", "", "a machine client of the target with a registered public key, for the private_key_jwt checks")
	fl.StringVar(&opts.MachinePrivateKeyFile, "machine-private-key-file", "", "PEM private key of the --machine-key-client-id client")
	fl.BoolVar(&opts.AllowInsecureKeyFile, secretflag.AllowInsecureFlag[2:], false, "use --client-secret-file and --client-secret-2-file even when group or others may read them (unsafe)")
	fl.BoolVar(&opts.RealTime, "real-time", false, "without a test clock, wait for real for expiry checks of up to a minute")
	fl.DurationVar(&opts.Timeout, "timeout", 0, "per-check timeout (default 60s; 10m with --approve=manual)")
	fl.IntVar(&opts.Parallel, "parallel", 0, "checks run at once (default 4; 1 with --approve=manual)")
	fl.StringVar(&opts.JSON, "json", "", `write the report (or with --list, the catalogue) as JSON to this file ("-" for stdout)`)
	fl.StringVar(&opts.JUnit, "junit", "", `write the report as JUnit XML to this file ("-" for stdout)`)
	fl.StringVar(&opts.HTML, "html", "", `write the report as one self-contained HTML page, with the HTTP exchanges behind each verdict that is not a pass (secrets redacted), to this file ("-" for stdout)`)
	fl.BoolVar(&opts.List, "list", false, "list the checks (id, area, severity, needs, title) instead of running them")
	fl.StringVar(&opts.Run, "run", "", "run only checks whose ID matches this regular expression, e.g. '^DEV-'")
	fl.StringVar(&opts.Baseline, "baseline", "", "file of check IDs expected to fail, one per line ('#' comments)")
	fl.BoolVar(&opts.Verbose, "verbose", false, "show each check's source in the report, and progress even when stderr is not a terminal")
	return cmd
}

// validate rejects contradictory flags, so none is silently ignored.
func (o *Options) validate() error {
	switch {
	case o.List:
		if o.BaseURL != "" || o.Local {
			return clierr.FlagErrorf("--list takes no <base_url> and no --local")
		}
		if o.JUnit != "" || o.HTML != "" {
			return clierr.FlagErrorf("--list writes JSON (--json), not JUnit or HTML")
		}
	case o.Local && o.BaseURL != "":
		return clierr.FlagErrorf("--local starts its own server: give no <base_url>")
	case !o.Local && o.BaseURL == "":
		return clierr.FlagErrorf("give a <base_url>, or --local to check the reference server in-process")
	}
	if o.Local {
		for flag, set := range map[string]bool{
			"--clock-url": o.ClockURL != "", "--session-cookie": o.SessionCookie != "", "--api-key": o.APIKey != "",
			"--approve": o.Approve != ApproveNone && o.Approve != ApproveForm,
		} {
			if set {
				return clierr.FlagErrorf("%s cannot be used with --local (it provides its own)", flag)
			}
		}
	} else if o.DB != "" {
		return clierr.FlagErrorf("--db is only for --local")
	}
	if o.BrowserCommand != "" && (o.Local || o.Approve != ApproveNone) {
		return clierr.FlagErrorf("--browser-command is the approver: give no --approve and no --local")
	}
	switch o.Approve {
	case ApproveForm, ApproveManual, ApproveNone, ApproveBrowser:
	default:
		return clierr.FlagErrorf("--approve must be form, browser, manual or none, not %q", o.Approve)
	}
	if o.Approve != ApproveBrowser && (o.Password != "" || o.Headed || o.Chromium != "") {
		return clierr.FlagErrorf("--password, --headed and --chromium are for --approve=browser")
	}
	if _, err := conformance.ProfileChecks(o.Profile); err != nil {
		return clierr.FlagErrorf("--profile: %v", err)
	}
	if (o.CIMDCert == "") != (o.CIMDKey == "") {
		return clierr.FlagErrorf("--cimd-cert and --cimd-key go together")
	}
	if o.CIMDCert != "" && o.Local {
		return clierr.FlagErrorf("--cimd-cert is for remote targets; --local trusts its own document host")
	}
	if n := countStdout(o.JSON, o.JUnit, o.HTML); n > 1 {
		return clierr.FlagErrorf("only one of --json, --junit and --html can write to stdout")
	}
	if err := o.validateClients(); err != nil {
		return err
	}
	if o.Timeout < 0 || o.Parallel < 0 {
		return clierr.FlagErrorf("--timeout and --parallel must not be negative")
	}
	return nil
}

// validateClients checks the pre-registered clients' flags.
func (o *Options) validateClients() error {
	switch {
	case o.ClientID == "" && (o.ClientID2 != "" || o.ClientSecret != ""):
		return clierr.FlagErrorf("--client-id-2 and --client-secret need --client-id")
	case (o.MachineClientID == "") != (o.MachineClientSecret == ""):
		return clierr.FlagErrorf("--machine-client-id and --machine-client-secret go together")
	case (o.MachineKeyClientID == "") != (o.MachinePrivateKeyFile == ""):
		return clierr.FlagErrorf("--machine-key-client-id and --machine-private-key-file go together")
	case o.ClientID2 == "" && o.ClientSecret2 != "":
		return clierr.FlagErrorf("--client-secret-2 needs --client-id-2")
	case o.ClientID == "":
		return nil
	case o.Local:
		return clierr.FlagErrorf("--client-id cannot be used with --local (it registers its own)")
	case o.Profile != conformance.ProfileMCP:
		return clierr.FlagErrorf("--client-id is for --profile mcp; the contract profile registers its own clients")
	case o.ClientID == o.ClientID2:
		return clierr.FlagErrorf("--client-id-2 must be another client than --client-id")
	}
	return nil
}

// dropStraySecret forgets a client secret that came from the environment
// (login's MCPAUTH_CLIENT_SECRET) when its client is not given.
func dropStraySecret(fl *pflag.FlagSet, id string, secret *string, name string) {
	if id == "" && !fl.Changed(name) && !fl.Changed(name+"-file") {
		*secret = ""
	}
}

// Run runs the suite (or lists it) and writes the reports. An interrupt
// cancels the checks still running; the report of what ran is still written.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	var filter *regexp.Regexp
	if opts.Run != "" {
		re, err := regexp.Compile(opts.Run)
		if err != nil {
			return clierr.FlagErrorf("--run: %v", err)
		}
		filter = re
	}
	if opts.List {
		return writeList(opts, selected(opts.Profile, filter))
	}
	var baseline *conformance.Baseline
	if opts.Baseline != "" {
		b, err := conformance.LoadBaseline(opts.Baseline)
		if err != nil {
			return clierr.FlagErrorf("--baseline: %v", err)
		}
		baseline = b
	}
	var hc *http.Client
	if opts.HTTPClient != nil {
		c, err := opts.HTTPClient()
		if err != nil {
			return err
		}
		hc = c
	}

	target, suiteOpts, cleanup, err := buildTarget(ctx, opts, hc)
	if err != nil {
		return err
	}
	defer cleanup()
	suiteOpts.Filter = filter
	suiteOpts.Baseline = baseline
	checks := selected(opts.Profile, filter)
	prog := newProgress(opts, len(checks))
	suiteOpts.OnProgress = prog.report

	rep := conformance.RunChecks(ctx, target, selected(opts.Profile, nil), suiteOpts)
	prog.finish()
	if err := writeReports(opts, rep); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("conformance run interrupted: %w", context.Cause(ctx))
	}
	if rep.Failed() {
		return clierr.SilentExit(clierr.ExitCheckFailed)
	}
	return nil
}

// selected returns the catalogue's checks that filter keeps.
func selected(profile string, filter *regexp.Regexp) []conformance.Check {
	var out []conformance.Check
	all, _ := conformance.ProfileChecks(profile) // validated with the flags
	for _, c := range all {
		if filter == nil || filter.MatchString(c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// writeReports writes the text table (to stdout, or to stderr when a
// machine-readable report takes stdout) and the requested files.
func writeReports(opts *Options, rep *conformance.Report) error {
	text, tty, width := opts.IO.Out, opts.IO.StdoutTTY, opts.IO.TerminalWidth()
	if countStdout(opts.JSON, opts.JUnit, opts.HTML) > 0 {
		text, tty, width = opts.IO.ErrOut, opts.IO.StderrTTY, opts.IO.Width
		if width == 0 && tty {
			width = 80 // as TerminalWidth does for stdout
		}
	}
	// A pipe or a CI log gets every title whole: width 0.
	err := report.WriteText(text, rep, report.TextOptions{
		Color:   report.ColorFromEnv(opts.Getenv, tty),
		Verbose: opts.Verbose,
		Width:   width,
	})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		flag, path string
		write      func(io.Writer, *conformance.Report) error
	}{{"--json", opts.JSON, report.WriteJSON}, {"--junit", opts.JUnit, report.WriteJUnit}, {"--html", opts.HTML, report.WriteHTML}} {
		if f.path == "" {
			continue
		}
		if err := writeTo(opts, f.path, func(w io.Writer) error { return f.write(w, rep) }); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

// countStdout counts the reports that go to standard output ("-").
func countStdout(paths ...string) int {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	return n
}

// writeTo writes with write to path, or to stdout for "-".
func writeTo(opts *Options, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(opts.IO.Out)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	return nil
}
