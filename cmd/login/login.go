// Package login implements `mcpauth login`: the authorization code flow with
// PKCE through a loopback redirect, and a browser.
package login

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/loginflow"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/secretflag"
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
	Discover                                  cmdutil.DiscoverFlags
	Machine                                   MachineOptions // machine.go
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
	fl.BoolVar(&opts.AllowInsecureKeyFile, secretflag.AllowInsecureFlag[2:], false,
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
	disc, tok, st, user, err := opts.browser().Run(ctx, &phase)
	if err != nil {
		return clierr.Cancelled(ctx, "login", &phase, err)
	}
	return opts.F.ReportLogin(disc, tok, st, user)
}

// browser is the browser login opts ask for.
func (opts *Options) browser() *loginflow.Browser {
	return &loginflow.Browser{F: opts.F, Target: opts.Target, ClientID: opts.ClientID, ClientSecret: opts.ClientSecret,
		ClientMetadataURL: opts.ClientMetadataURL, Port: opts.Port, Timeout: opts.Timeout, NoResource: opts.NoResource,
		NoBrowser: opts.NoBrowser, BrowserCommand: opts.BrowserCommand, Scope: opts.Scope,
		Discover: opts.Discover, DPoP: cmdutil.DPoPChoice{Insist: opts.Machine.DPoP, Refuse: opts.Machine.NoDPoP}}
}
