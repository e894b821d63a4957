// Package ping implements `mcpauth ping`: check a credential at /api/ping.
package ping

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/flows"
)

// Options are ping's arguments.
type Options struct {
	F      *cmdutil.Factory
	Server string
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	return &cobra.Command{
		Use:   "ping [<mcp-url>]",
		Short: "Check the stored credential against the server's /api/ping",
		Long: `Send the stored token (or API key, or $MCPAUTH_TOKEN) to {base_url}/api/ping.
Prints the user id on stdout. Never starts a login: without a valid credential
it exits 3 and says how to log in.`,
		Example: `  mcpauth ping
  mcpauth ping http://127.0.0.1:8080/mcp --output json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Server = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run pings.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	cred, err := f.LoadCredential(opts.Server)
	if err != nil {
		return err
	}
	if cred.BaseURL == "" {
		return cmdutil.FlagErrorf("MCPAUTH_TOKEN is set: name the server, e.g. mcpauth ping http://127.0.0.1:8080/mcp")
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return err
	}
	res, err := flows.Ping(ctx, hc, cred.BaseURL, cred.Token)
	if err != nil {
		if uerr := cmdutil.Unreachable(cred.BaseURL, err); uerr != err {
			return uerr
		}
		if cred.FromEnv {
			return cmdutil.FlowError("ping with MCPAUTH_TOKEN", err)
		}
		return cmdutil.FlowError(fmt.Sprintf("ping %s (run: mcpauth login %s)", cred.BaseURL, cred.Server), err)
	}
	if f.Globals.JSON() {
		out := map[string]string{"status": res.Status, "user_id": res.UserID, "server": cred.BaseURL}
		if res.Name != "" {
			out["name"] = res.Name
		}
		return cmdutil.WriteJSON(f.IO.Out, out)
	}
	cmdutil.NewUI(f).Success("ok: user %s at %s", cmdutil.User{ID: res.UserID, Name: res.Name}, cred.BaseURL)
	_, err = fmt.Fprintln(f.IO.Out, res.UserID)
	return err
}
