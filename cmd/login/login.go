// Package login implements `mcpauth login`: the authorization code flow with
// PKCE through a loopback redirect, and a browser.
package login

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/countdown"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Options are login's flags.
type Options struct {
	F      *cmdutil.Factory
	Target string

	ClientID, ClientSecret, ClientMetadataURL string
	Port                                      int
	Timeout                                   time.Duration
	NoResource, NoBrowser                     bool
	AllowInsecureKeyFile                      bool // key, secret and assertion files others may read
	BrowserCommand, Scope                     string
	// StepUp is the scope a resource asked for with a 403
	// insufficient_scope, added to Scope (the granted one) for a step-up.
	// It is the server's word: narrowed to what the server lists and
	// bounded (flows.StepUpScope), and the authorization endpoint is asked
	// about the request before the browser opens (flows Preflight).
	StepUp   string
	Discover cmdutil.DiscoverFlags
	Machine  MachineOptions // machine.go
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	var secret *cmdutil.SecretFlag
	cmd := &cobra.Command{
		Use:   "login <mcp-url>",
		Short: "Log in to an MCP server in the browser (authorization code + PKCE)",
		Long: `Log in to an MCP server: discover its authorization server, register a
client if needed, open the browser at the consent page, receive the code on a
loopback listener at 127.0.0.1 and store the token in the OS keyring.

Over SSH or without a display no browser is started: the URL is printed, with
an ssh -L hint; 'mcpauth device' is the alternative for headless machines.

Machines log in without a browser: --client-credentials (with a client
secret or --private-key-file), --jwt-bearer-assertion-file (a workload
identity token), or --id-token-file with --idp-token-endpoint (enterprise-
managed authorization). Their tokens are renewed by token and ping by
running the grant again. DPoP is used when the server advertises it.`,
		Example: `  mcpauth login http://127.0.0.1:8080/mcp
  mcpauth login https://mcp.example.com/mcp --no-browser
  mcpauth login https://mcp.example.com/mcp --browser-command firefox
  MCPAUTH_CLIENT_SECRET=… mcpauth login https://mcp.example.com/mcp --client-credentials --client-id ci-bot
  mcpauth login https://mcp.example.com/mcp --jwt-bearer-assertion-file /run/oidc-token`,
		Args:    cmdutil.TargetArgs,
		PreRunE: func(*cobra.Command, []string) error { return secret.Resolve(f.IO.In, f.Getenv) },
		RunE:    cmdutil.RunE(opts, &opts.Target, runF, Run),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ClientID, "client-id", "", "use this pre-registered client id")
	secret = cmdutil.BindSecret(fl, &opts.ClientSecret, "client-secret", "secret of the pre-registered client").Private(&opts.AllowInsecureKeyFile)
	fl.BoolVar(&opts.AllowInsecureKeyFile, creds.AllowInsecureKeyFileFlag[2:], false,
		"use --private-key-file, --client-secret-file, --jwt-bearer-assertion-file and --id-token-file even when group or others may read them (unsafe)")
	fl.StringVar(&opts.ClientMetadataURL, "client-metadata-url", f.Getenv("MCPAUTH_CLIENT_METADATA_URL"), "client ID metadata document URL, used when the server supports them (env MCPAUTH_CLIENT_METADATA_URL)")
	fl.IntVar(&opts.Port, "port", 0, "loopback port for the redirect (default: a registered or free port)")
	fl.DurationVar(&opts.Timeout, "timeout", flows.DefaultLoginTimeout, "how long to wait for the browser")
	fl.BoolVar(&opts.NoResource, "no-resource", false, "do not send the RFC 8707 resource parameter (for servers that reject it)")
	fl.BoolVar(&opts.NoBrowser, "no-browser", false, "print the URL instead of opening a browser")
	fl.StringVar(&opts.BrowserCommand, "browser-command", "", "program that opens the URL (env MCPAUTH_BROWSER)")
	fl.StringVar(&opts.Scope, "scope", "", "scope to request (default: from the server's challenge or metadata)")
	opts.Discover.Bind(fl)
	opts.Machine.bind(fl)
	return cmd
}

// Run logs in. Ctrl-C (ctx cancelled) says what it interrupted.
func Run(ctx context.Context, opts *Options) error {
	if err := (cmdutil.DPoPChoice{Insist: opts.Machine.DPoP, Refuse: opts.Machine.NoDPoP}).Check(); err != nil {
		return err
	}
	if grant := opts.machineGrant(); grant != "" {
		return runMachine(ctx, opts, grant)
	}
	if err := opts.Machine.checkBrowserLogin(); err != nil {
		return err
	}
	var phase clierr.Phase
	disc, tok, st, user, err := login(ctx, opts, &phase)
	if err != nil {
		return clierr.Cancelled(ctx, "login", &phase, err)
	}
	return opts.F.ReportLogin(disc, tok, st, user)
}

// Login runs the authorization code flow for opts and stores the token; it
// is Run without the report, for commands that re-authorize (step-up).
func Login(ctx context.Context, opts *Options) (*flows.Discovery, *flows.Token, *keyring.Store, error) {
	var phase clierr.Phase
	disc, tok, st, _, err := login(ctx, opts, &phase)
	if err != nil {
		return nil, nil, nil, clierr.Cancelled(ctx, "login", &phase, err)
	}
	return disc, tok, st, nil
}

func login(ctx context.Context, opts *Options, phase *clierr.Phase) (*flows.Discovery, *flows.Token, *keyring.Store, creds.User, error) {
	var none creds.User
	f := opts.F
	ui := cmdutil.NewUI(f)
	target, err := cmdutil.ParseTarget(opts.Target)
	if err != nil {
		return nil, nil, nil, none, err
	}
	// A busy --port fails now, not after discovery and registration.
	if err := clierr.CheckPort(opts.Port); err != nil {
		return nil, nil, nil, none, err
	}
	st, err := f.OpenStore()
	if err != nil {
		return nil, nil, nil, none, err
	}
	phase.Set("discovering " + target)
	disc, err := f.Discover(ctx, target, opts.Discover)
	if err != nil {
		return nil, nil, nil, none, err
	}
	moved := cmdutil.NoteMigration(f, st, disc)
	scope, err := stepUpScope(ui, opts, disc)
	if err != nil {
		return nil, nil, nil, none, err
	}
	f.NoteReplace(st, creds.ServerKey(disc.Resource), f.Globals.Account, " if this login succeeds")
	hc, err := f.HTTPClient()
	if err != nil {
		return nil, nil, nil, none, err
	}
	ccfg := flows.ClientConfig{
		HTTPClient: hc, Clock: f.Clock, ClientID: opts.ClientID, ClientSecret: opts.ClientSecret,
		MetadataDocumentURL: opts.ClientMetadataURL, Cache: creds.RegistrationCache{Store: st}, Scope: scope,
	}
	phase.Set("registering a client at " + disc.Issuer)
	client, err := flows.ResolveClient(ctx, ccfg, disc)
	if err != nil {
		return nil, nil, nil, none, clierr.FlowError("choosing a client identity", err)
	}
	base, headless := f.Opener(opts.BrowserCommand, opts.NoBrowser, opts.Discover.AllowInsecure)
	phase.Set("starting the callback listener")
	timeout := cmp.Or(opts.Timeout, flows.DefaultLoginTimeout)
	spin := countdown.New(f.IO.ErrOut, f.IO.StderrTTY && !f.Globals.Quiet, f.Clock, ui.Faint)
	defer spin.Stop()
	open := func(authURL string) error {
		phase.Set("waiting for the browser")
		deadline := f.Clock.Now().Add(timeout)
		if base == nil {
			printURL(f, ui, target, authURL, headless, disc.SupportsDeviceFlow())
		} else {
			ui.Info("Opening the browser to log in to %s …", disc.Resource)
			if err := base(authURL); errors.Is(err, flows.ErrNotLaunchable) {
				ui.Warn("not opening a browser: %v", err)
				printURL(f, ui, target, authURL, "", disc.SupportsDeviceFlow())
			} else if err != nil {
				ui.Warn("could not open a browser (%v)", err)
				printURL(f, ui, target, authURL, "", disc.SupportsDeviceFlow())
			}
		}
		spin.Start("Waiting for the browser", deadline, " (--timeout to wait longer)")
		return nil
	}
	key, err := f.LoginDPoP(st, disc, cmdutil.DPoPChoice{Insist: opts.Machine.DPoP, Refuse: opts.Machine.NoDPoP})
	if err != nil {
		return nil, nil, nil, none, err
	}
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{
		HTTPClient: hc, Clock: f.Clock, Discovery: disc, Client: client, OpenBrowser: open, DPoP: key,
		Port: opts.Port, Timeout: opts.Timeout, NoResource: opts.NoResource, Scope: scope, Preflight: opts.StepUp != "",
		Reregister: func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
	})
	spin.Stop()
	if err != nil {
		if opts.Port != 0 {
			if perr := clierr.PortError(opts.Port, err); perr != err {
				return nil, nil, nil, none, perr
			}
		}
		return nil, nil, nil, none, clierr.FlowErrorRetry(loggingIn(err), "mcpauth login "+target, err)
	}
	phase.Set("storing the token")
	user := f.Keeper().LookupUser(ctx, disc, client.ID, tok, key)
	old, replacing := cmdutil.ToDrop(st, creds.StoreKey(disc), f.Globals.Account)
	if err := creds.SaveLogin(st, f.Globals.Account, disc, client, tok, key, user); err != nil {
		return nil, nil, nil, none, err
	}
	moved.Done(f, disc, user)
	if replacing {
		f.RevokeReplaced(ctx, creds.StoreKey(disc), old)
	}
	return disc, tok, st, user, nil
}

// stepUpScope is the scope to ask for: opts.Scope, plus for a step-up what
// the server asked for that it lists (the rest is named in a warning).
func stepUpScope(ui *cmdutil.UI, opts *Options, disc *flows.Discovery) (string, error) {
	if opts.StepUp == "" {
		return opts.Scope, nil
	}
	scope, dropped, err := flows.StepUpScope(opts.Scope, opts.StepUp, disc)
	if len(dropped) > 0 {
		ui.Warn("not asking for %d scope(s) the server asked for but neither it nor its authorization server lists in scopes_supported: %s",
			len(dropped), flows.AbbrevScope(strings.Join(dropped, " ")))
	}
	if err != nil {
		return "", clierr.FlowError("choosing the scope to ask for", err)
	}
	return scope, nil
}

func printURL(f *cmdutil.Factory, ui *cmdutil.UI, target, authURL, headless string, device bool) {
	if headless != "" {
		ui.Info("Not opening a browser: %s.", headless)
	}
	ui.Info("Open this URL in a browser to log in:")
	fmt.Fprintln(f.IO.ErrOut, "\n  "+cmdutil.Line(authURL)+"\n") // whole, to be copied
	if u, err := url.Parse(authURL); err == nil {
		if redirect, err := url.Parse(u.Query().Get("redirect_uri")); err == nil && redirect.Port() != "" && redirect.Hostname() == "127.0.0.1" {
			// The listener redirects its /start to the URL above: shorter
			// to copy, in a browser on this machine.
			ui.Info("Or, in a browser on this machine: http://127.0.0.1:%s%s", redirect.Port(), flows.StartPath)
			ui.Info("If the browser runs on another machine, forward the callback port first:\n  ssh -L %s:127.0.0.1:%s <this-host>", redirect.Port(), redirect.Port())
		}
	}
	if device {
		ui.Info("Or use the device flow, which needs no callback: mcpauth device %s", target)
	}
}
