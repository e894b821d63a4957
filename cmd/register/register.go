// Package register implements `mcpauth register`: RFC 7591 dynamic client
// registration on its own.
package register

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
)

// Options are register's flags.
type Options struct {
	F            *cmdutil.Factory
	Target       string
	RedirectURIs []string
	ClientName   string
	GrantTypes   []string
	Device       bool
	NoCache      bool
	Discover     cmdutil.DiscoverFlags
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "register <mcp-url>",
		Short: "Register a client with the server's authorization server (RFC 7591)",
		Long: `Register a new public client and print what the server issued. The
registration is cached for login and device unless --no-cache.`,
		Example: "  mcpauth register http://127.0.0.1:8080/mcp\n  mcpauth register https://mcp.example.com/mcp --device --output json",
		Args:    cmdutil.TargetArgs,
		RunE:    cmdutil.RunE(opts, &opts.Target, runF, Run),
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.RedirectURIs, "redirect-uri", nil, "redirect URI to register (repeatable; default: three loopback URIs)")
	fl.StringVar(&opts.ClientName, "client-name", "mcpauth CLI", "client name shown on consent screens")
	fl.StringArrayVar(&opts.GrantTypes, "grant-type", nil, "grant type (repeatable; default authorization_code, plus the device grant when offered)")
	fl.BoolVar(&opts.Device, "device", false, "register for the device grant only (no redirect URIs)")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "do not cache the registration for login and device")
	opts.Discover.Bind(fl)
	return cmd
}

// Run registers.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	disc, err := f.Discover(ctx, opts.Target, opts.Discover)
	if err != nil {
		return err
	}
	if disc.AuthServer.RegistrationEndpoint == "" {
		return clierr.WithExit(clierr.ExitFailure, errors.New("the authorization server advertises no registration endpoint; if it registers clients anyway, pass --registration-endpoint URL; otherwise use a pre-registered --client-id with login"))
	}
	md := flows.ClientMetadata{ClientName: opts.ClientName, TokenEndpointAuthMethod: flows.AuthMethodNone, Scope: disc.Scope, GrantTypes: opts.GrantTypes}
	switch {
	case opts.Device:
		md.GrantTypes = []string{flows.GrantTypeDeviceCode}
	case len(opts.RedirectURIs) > 0:
		md.RedirectURIs = opts.RedirectURIs
	default:
		md.RedirectURIs = flows.DefaultRedirectURIs(disc.Resource)
	}
	if len(md.GrantTypes) == 0 {
		md.GrantTypes = []string{"authorization_code"}
		if disc.SupportsDeviceFlow() {
			md.GrantTypes = append(md.GrantTypes, flows.GrantTypeDeviceCode)
		}
	}
	if !opts.Device {
		md.ResponseTypes = []string{"code"}
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return err
	}
	ci, err := flows.Register(ctx, hc, disc.AuthServer.RegistrationEndpoint, md)
	if err != nil {
		return clierr.FlowError("registering", err)
	}
	// Only a client login can use is cached: one with the loopback redirect
	// URIs login listens on. Anything else would break the next login.
	cached := !opts.NoCache && !opts.Device && len(opts.RedirectURIs) == 0
	if cached {
		st, err := f.OpenStore()
		if err != nil {
			return err
		}
		if err := (creds.RegistrationCache{Store: st}).Put(disc.Issuer, disc.Resource, ci); err != nil {
			return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("caching the registration: %w", err))
		}
	}
	if f.Globals.JSON() {
		return cmdutil.WriteJSON(f.IO.Out, ci)
	}
	ui := cmdutil.NewUI(f)
	ui.Success("Registered client %q at %s", ci.ClientName, disc.Issuer)
	switch {
	case cached:
		ui.Info("Cached: login and device will use this client for %s.", disc.Resource)
	case !opts.NoCache:
		ui.Info("Not cached (custom redirect URIs or device only): pass --client-id %s to login or device.", ci.ClientID)
	}
	fmt.Fprintln(f.IO.Out, cmdutil.Line(ci.ClientID))
	return nil
}
