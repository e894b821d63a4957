// Package device implements `mcpauth device`: the device authorization flow
// (RFC 8628) for machines without a browser.
package device

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/loginflow"
)

// Options are device's flags.
type Options struct {
	F      *cmdutil.Factory
	Target string

	ClientID, Scope, BrowserCommand, Dialect string
	Clipboard, NoResource                    bool
	DPoP                                     cmdutil.DPoPChoice
	Discover                                 cmdutil.DiscoverFlags
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "device <mcp-url>",
		Short: "Log in with a code typed on another device (RFC 8628 device flow)",
		Long: `Log in without a local browser: mcpauth shows a short code and a URL; open
the URL on any device, enter the code and approve. mcpauth polls at the
server's interval (5 s longer after each slow_down) and stores the token.`,
		Example: `  mcpauth device http://127.0.0.1:8080/mcp
  mcpauth device https://mcp.example.com/mcp --clipboard`,
		Args: cmdutil.TargetArgs,
		RunE: cmdutil.RunE(opts, &opts.Target, runF, Run),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ClientID, "client-id", "", "use this pre-registered client id")
	fl.StringVar(&opts.Scope, "scope", "", "scope to request")
	fl.BoolVar(&opts.Clipboard, "clipboard", false, "copy the code to the clipboard (it is still printed)")
	fl.StringVar(&opts.BrowserCommand, "browser-command", "", "program that opens the verification URL when you press Enter (env MCPAUTH_BROWSER)")
	fl.StringVar(&opts.Dialect, "dialect", "", "device endpoint dialect: json (mcpauth contract) or form (RFC 8628); default from the metadata")
	fl.BoolVar(&opts.DPoP.Insist, "dpop", false, "bind tokens to a key (DPoP, RFC 9449); automatic when the MCP server says it takes DPoP")
	fl.BoolVar(&opts.DPoP.Refuse, "no-dpop", false, "do not use DPoP even when the MCP server takes it")
	fl.BoolVar(&opts.NoResource, "no-resource", false, "do not send the RFC 8707 resource parameter (form dialect)")
	opts.Discover.Bind(fl)
	return cmd
}

// Run performs the device flow. Ctrl-C (ctx cancelled) says what it
// interrupted, on a clean line.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.DPoP.Check(); err != nil {
		return err
	}
	var phase clierr.Phase
	d := &loginflow.Device{F: opts.F, Target: opts.Target, ClientID: opts.ClientID, Scope: opts.Scope, BrowserCommand: opts.BrowserCommand,
		Dialect: opts.Dialect, Clipboard: opts.Clipboard, NoResource: opts.NoResource, DPoP: opts.DPoP, Discover: opts.Discover}
	disc, tok, st, user, err := d.Run(ctx, &phase)
	if err != nil {
		return clierr.Cancelled(ctx, "device login", &phase, err)
	}
	return opts.F.ReportLogin(disc, tok, st, user)
}
