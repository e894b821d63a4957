// Package loginflow is the logging in the command verbs share: in the
// browser (authorization code and PKCE), with the device flow, and again
// from a command that needs a new credential (LogInAgain). Commands call it
// rather than each other.
package loginflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/countdown"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/keyring"
)

// Browser is a browser login: the authorization code flow with PKCE
// through a loopback redirect.
type Browser struct {
	F      *cmdutil.Factory
	Target string

	ClientID, ClientSecret, ClientMetadataURL string
	Port                                      int
	Timeout                                   time.Duration
	NoResource, NoBrowser                     bool
	BrowserCommand, Scope                     string
	// StepUp is the scope a resource asked for with a 403
	// insufficient_scope, added to Scope (the granted one) for a step-up.
	// It is the server's word: narrowed to what the server lists and
	// bounded (boundedStepUpScope), and the authorization endpoint is asked
	// about the request before the browser opens (flows Preflight).
	StepUp   string
	Discover cmdutil.DiscoverFlags
	DPoP     cmdutil.DPoPChoice
}

// LoggingIn is what a failed login was doing, with the way out when the
// server issued the wrong kind of token.
func LoggingIn(err error) string {
	if errors.Is(err, flows.ErrNotDPoPBound) {
		return "logging in (nothing stored; --no-dpop accepts a Bearer token)"
	}
	return "logging in"
}

// Run logs in in the browser and stores the token, saying what it is doing
// in phase.
func (opts *Browser) Run(ctx context.Context, phase *clierr.Phase) (*flows.Discovery, *flows.Token, *keyring.Store, creds.User, error) {
	var none creds.User
	f := opts.F
	ui := cmdutil.NewUI(f)
	// A busy --port fails now, not after discovery and registration.
	target, st, disc, err := discover(ctx, f, phase, opts.Target, opts.Discover, func() error { return clierr.CheckPort(opts.Port) })
	if err != nil {
		return nil, nil, nil, none, err
	}
	moved := cmdutil.NoteMigration(f, st, disc)
	scope, err := stepUpScope(ui, opts, disc)
	if err != nil {
		return nil, nil, nil, none, err
	}
	ccfg := flows.ClientConfig{ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, MetadataDocumentURL: opts.ClientMetadataURL, Scope: scope}
	client, err := resolveClient(ctx, f, phase, st, disc, &ccfg)
	if err != nil {
		return nil, nil, nil, none, err
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
			if err := base(authURL); errors.Is(err, oauthwire.ErrNotLaunchable) {
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
	key, err := f.LoginDPoP(st, disc, opts.DPoP)
	if err != nil {
		return nil, nil, nil, none, err
	}
	// The browser's "Signed in" page names the user as the terminal does
	// (the name, the id after it), so the one lookup serves both.
	var user creds.User
	looked := false
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{
		HTTPClient: ccfg.HTTPClient, Clock: f.Clock, Discovery: disc, Client: client, OpenBrowser: open, DPoP: key,
		Port: opts.Port, Timeout: opts.Timeout, NoResource: opts.NoResource, Scope: scope, Preflight: opts.StepUp != "",
		Reregister: func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
		Account: func(ctx context.Context, tok *flows.Token) string {
			user, looked = f.Keeper().LookupUser(ctx, disc, client.ID, tok, key), true
			return user.String()
		},
	})
	spin.Stop()
	if err != nil {
		if opts.Port != 0 {
			if perr := clierr.PortError(opts.Port, err); perr != err {
				return nil, nil, nil, none, perr
			}
		}
		return nil, nil, nil, none, clierr.FlowErrorRetry(LoggingIn(err), "mcpauth login "+target, err)
	}
	phase.Set("storing the token")
	if !looked {
		user = f.Keeper().LookupUser(ctx, disc, client.ID, tok, key)
	}
	if err := store(ctx, f, st, moved, disc, client, tok, key, user); err != nil {
		return nil, nil, nil, none, err
	}
	return disc, tok, st, user, nil
}

// stepUpScope is the scope to ask for: opts.Scope, plus for a step-up what
// the server asked for that it lists (the rest is named in a warning).
func stepUpScope(ui *cmdutil.UI, opts *Browser, disc *flows.Discovery) (string, error) {
	if opts.StepUp == "" {
		return opts.Scope, nil
	}
	scope, dropped, err := boundedStepUpScope(opts.Scope, opts.StepUp, disc)
	if len(dropped) > 0 {
		ui.Warn("not asking for %d scope(s) the server asked for but neither it nor its authorization server lists in scopes_supported: %s",
			len(dropped), oauthwire.AbbrevScope(strings.Join(dropped, " ")))
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
			ui.Info("Or, in a browser on this machine: http://127.0.0.1:%s%s", redirect.Port(), oauthwire.LoopbackStartPath)
			ui.Info("If the browser runs on another machine, forward the callback port first:\n  ssh -L %s:127.0.0.1:%s <this-host>", redirect.Port(), redirect.Port())
		}
	}
	if device {
		ui.Info("Or use the device flow, which needs no callback: mcpauth device %s", target)
	}
}
