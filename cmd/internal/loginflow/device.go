package loginflow

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/countdown"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/keyring"
)

// Device is a device flow login (RFC 8628), for machines without a
// browser.
type Device struct {
	F      *cmdutil.Factory
	Target string

	ClientID, Scope, BrowserCommand, Dialect string
	Clipboard, NoResource                    bool
	DPoP                                     cmdutil.DPoPChoice
	Discover                                 cmdutil.DiscoverFlags
}

// ErrNoDeviceFlow: the authorization server has no device authorization
// endpoint.
var ErrNoDeviceFlow = errors.New("no device flow")

type noDeviceFlow struct{ issuer, target string }

func (e noDeviceFlow) Error() string {
	return fmt.Sprintf("%s does not offer the device flow (no device_authorization_endpoint); use: mcpauth login %s", e.issuer, e.target)
}

func (noDeviceFlow) Is(target error) bool { return target == ErrNoDeviceFlow }

// Run logs in with the device flow and stores the token, saying what it is
// doing in phase.
func (opts *Device) Run(ctx context.Context, phase *clierr.Phase) (*flows.Discovery, *flows.Token, *keyring.Store, creds.User, error) {
	var none creds.User
	f := opts.F
	ui := cmdutil.NewUI(f)
	var dialect flows.Dialect
	switch opts.Dialect {
	case "", "auto":
	case "json":
		dialect = flows.DialectJSON
	case "form":
		dialect = flows.DialectForm
	default:
		return nil, nil, nil, none, clierr.FlagErrorf("--dialect must be json or form")
	}
	_, st, disc, err := discover(ctx, f, phase, opts.Target, opts.Discover, nil)
	if err != nil {
		return nil, nil, nil, none, err
	}
	if !disc.SupportsDeviceFlow() {
		return nil, nil, nil, none, clierr.WithExit(clierr.ExitFailure, noDeviceFlow{issuer: disc.Issuer, target: opts.Target})
	}
	moved := cmdutil.NoteMigration(f, st, disc)
	ccfg := flows.ClientConfig{ClientID: opts.ClientID, Scope: opts.Scope}
	client, err := resolveClient(ctx, f, phase, st, disc, &ccfg)
	if err != nil {
		return nil, nil, nil, none, err
	}
	key, err := f.LoginDPoP(st, disc, opts.DPoP)
	if err != nil {
		return nil, nil, nil, none, err
	}
	phase.Set("requesting a device code")
	spin := countdown.New(f.IO.ErrOut, f.IO.StderrTTY && !f.Globals.Quiet, f.Clock, ui.Faint)
	defer spin.Stop()
	tok, err := flows.Device(ctx, flows.DeviceConfig{
		HTTPClient: ccfg.HTTPClient, Clock: f.Clock, Discovery: disc, Client: client, Scope: opts.Scope,
		NoResource: opts.NoResource, Dialect: dialect, DPoP: key,
		ShowCode: func(da flows.DeviceAuthorization) {
			phase.Set("waiting for code " + da.UserCode + " to be approved")
			showCode(ctx, opts, ui, da)
			spin.Start("Waiting for approval", da.Expiry, "")
		},
		OnPoll: func(ev flows.PollEvent) {
			switch {
			case !f.Globals.Debug:
			case ev.Err == nil:
				fmt.Fprintf(f.IO.ErrOut, "poll %d: status %d, token received\n", ev.Attempt, ev.Status)
			default:
				fmt.Fprintf(f.IO.ErrOut, "poll %d: status %d, %s; next poll in %s\n", ev.Attempt, ev.Status, cmdutil.Text(ev.Err.Error()), ev.Interval)
			}
		},
		Reregister: func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
	})
	spin.Stop()
	if err != nil {
		return nil, nil, nil, none, clierr.FlowErrorRetry("device login", "mcpauth device "+opts.Target, err)
	}
	phase.Set("storing the token")
	user := f.Keeper().LookupUser(ctx, disc, client.ID, tok, key)
	if err := store(ctx, f, st, moved, disc, client, tok, key, user); err != nil {
		return nil, nil, nil, none, err
	}
	return disc, tok, st, user, nil
}

// showCode prints the code box and, on a terminal, offers to open the browser.
func showCode(ctx context.Context, opts *Device, ui *cmdutil.UI, da flows.DeviceAuthorization) {
	f := opts.F
	// The server's words: Box escapes them for the terminal.
	lines := []string{"Open:  " + da.VerificationURI, "Enter: " + da.UserCode}
	if da.VerificationURIComplete != "" {
		lines = append(lines, "", "or open "+da.VerificationURIComplete)
	}
	fmt.Fprintln(f.IO.ErrOut, ui.Box("Your code: "+da.UserCode, lines...))
	if opts.Clipboard {
		if err := copyToClipboard(da.UserCode); err != nil {
			ui.Warn("could not copy the code: %v", err)
		} else {
			ui.Info("The code is on the clipboard.")
		}
	}
	if !f.IO.CanPrompt() {
		return
	}
	open, _ := f.Opener(opts.BrowserCommand, false, opts.Discover.AllowInsecure)
	if open == nil {
		return // headless: the box says where to go
	}
	target := cmp.Or(da.VerificationURIComplete, da.VerificationURI)
	if err := oauthwire.CheckLaunchable(target, opts.Discover.AllowInsecure); err != nil {
		ui.Warn("not offering to open the browser: %v", err)
		return
	}
	ui.Info("Press Enter to open the browser (or open the URL on any device).")
	go func() {
		line := make(chan struct{}, 1)
		go func() {
			if _, err := bufio.NewReader(f.IO.In).ReadString('\n'); err == nil {
				line <- struct{}{}
			}
		}()
		select {
		case <-line:
			if err := open(target); err != nil {
				ui.Warn("could not open a browser: %v", err)
			}
		case <-ctx.Done():
		}
	}()
}

// copyToClipboard uses the first clipboard tool it finds.
func copyToClipboard(text string) error {
	for _, c := range [][]string{{"wl-copy"}, {"xclip", "-selection", "clipboard"}, {"xsel", "--clipboard", "--input"}, {"pbcopy"}, {"clip.exe"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Stdin = strings.NewReader(text)
		return cmd.Run()
	}
	return errors.New("no clipboard tool found (wl-copy, xclip, xsel, pbcopy or clip.exe)")
}
