// Package ping implements `mcpauth ping`: check a credential at /api/ping.
package ping

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/loginflow"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/internal/probe"
)

// Options are ping's arguments.
type Options struct {
	F          *cmdutil.Factory
	Server     string
	StepUp     bool
	Credential cmdutil.CredentialFlag
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "ping [<mcp-url>]",
		Short: "Check the stored credential against the server (/api/ping, else MCP tools/list)",
		Long: `Send the stored token (or API key, or $MCPAUTH_TOKEN) to {base_url}/api/ping
and print the user id on stdout. On a server without /api/ping (a 404), check
it with an MCP initialize and tools/list over Streamable HTTP instead and
print the MCP URL; the success line says which check was used. An expiring token is refreshed first, and a 401
invalid_token answer is retried once after a refresh. Never starts a login:
without a valid credential it exits 3 and says how to log in.`,
		Example: `  mcpauth ping
  mcpauth ping http://127.0.0.1:8080/mcp --output json`,
		Args: cobra.MaximumNArgs(1),
		RunE: cmdutil.RunE(opts, &opts.Server, runF, Run),
	}
	opts.Credential.Bind(cmd.Flags())
	cmd.Flags().BoolVar(&opts.StepUp, "step-up", false, "on 403 insufficient_scope, log in again in the browser for the scopes the server asks for (at most twice)")
	return cmd
}

// Run pings.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	cred, err := f.Keeper().Fresh(ctx, opts.Server)
	if err != nil {
		return err
	}
	if cred.BaseURL == "" {
		return clierr.FlagErrorf("MCPAUTH_TOKEN is set: name the server, e.g. mcpauth ping http://127.0.0.1:8080/mcp")
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return err
	}
	mcpURL := cmdutil.MCPEndpoint(cred, opts.Server)
	origin, err := opts.Credential.Origin(mcpURL) // the token goes to the MCP server's origin only
	if err != nil {
		return err
	}
	src := creds.NewSource(f.Keeper(), cred.Server, cred)
	if opts.StepUp && !cred.FromEnv && cred.Kind == creds.KindOAuth {
		ui := cmdutil.NewUI(f)
		again := loginflow.Again{F: f, Server: cred.Server, Log: ui.Info}
		src.StepUp = func(ctx context.Context, granted, required string) error {
			scope := oauthwire.UnionScopes(granted, required)
			ui.Info("The server needs more scope: logging in again for %q", scope)
			return again.LogIn(ctx, scope, "") // the union as asked, unnarrowed
		}
	}
	// Revoked or expired early: refreshed once and sent again; a
	// Bearer-only resource: a Bearer token, where a refresh can give one.
	// With --step-up, until the source's bound says no more (flows.StepUp's rule).
	c := (&flows.Transport{Origin: origin, Source: src, StepUps: flows.DefaultMaxStepUps + 1}).Client(hc)
	check := checkPing
	res, err := probe.Ping(ctx, c, cred.BaseURL, "")
	var tools *probe.MCPCheckResult
	if oe := (*flows.OAuthError)(nil); errors.As(err, &oe) && oe.StatusCode == http.StatusNotFound {
		// Not our server: any MCP server answers tools/list.
		check = checkMCP
		tools, err = probe.CheckMCP(ctx, c, mcpURL, "")
	}
	cred = src.Current()
	if err != nil {
		return failed(opts, cred, mcpURL, renewalCause(err))
	}
	ui := cmdutil.NewUI(f)
	if check == checkMCP {
		if f.Globals.JSON() {
			return cmdutil.WriteJSON(f.IO.Out, map[string]any{"status": "ok", "check": check, "server": mcpURL, "server_name": tools.ServerName, "tools": tools.Tools,
				"user_id": cmp.Or(cred.User.ID, creds.Subject(cred.Token))})
		}
		ui.Success("ok: %s at %s answered with %d tool(s)%s (checked with MCP tools/list: %s/api/ping is 404)", cmp.Or(tools.ServerName, "the MCP server"), mcpURL, tools.Tools, identity(cred), cred.BaseURL)
		_, err = fmt.Fprintln(f.IO.Out, cmdutil.Line(mcpURL))
		return err
	}
	if f.Globals.JSON() {
		out := map[string]string{"status": res.Status, "check": check, "user_id": res.UserID, "server": cred.BaseURL}
		if res.Name != "" {
			out["name"] = res.Name
		}
		return cmdutil.WriteJSON(f.IO.Out, out)
	}
	ui.Success("ok: user %s at %s (checked with GET /api/ping)", creds.User{ID: res.UserID, Name: res.Name}, cred.BaseURL)
	_, err = fmt.Fprintln(f.IO.Out, cmdutil.Line(res.UserID))
	return err
}

// failed says why the check failed, and what to do about it.
func failed(opts *Options, cred creds.Credential, mcpURL string, err error) error {
	if rerr := (*clierr.ExitError)(nil); errors.As(err, &rerr) {
		return err // already says what to do
	}
	if scope, ok := flows.RequiredScope(err); ok && !opts.StepUp {
		return clierr.FlowError(fmt.Sprintf("ping %s: the server needs scope %q (run: mcpauth ping --step-up %s, or mcpauth login %s --scope %q)",
			cred.BaseURL, scope, cred.Server, cred.Server, oauthwire.UnionScopes(cred.Scope, scope)), err)
	}
	if uerr := clierr.Unreachable(cred.BaseURL, err); uerr != err {
		return uerr
	}
	if oe := (*flows.OAuthError)(nil); errors.As(err, &oe) && oe.StatusCode >= 500 && !cred.FromEnv {
		// Some servers (the MCP TypeScript SDK's example) answer a
		// token they do not know with a 500, not a 401: one line, and
		// the login that fixes that case (exit 3).
		return clierr.WithExit(clierr.ExitAuthRequired, fmt.Errorf("%s answered HTTP %d to the stored token: a server error, or a token it no longer knows (some servers answer 500 rather than 401); if it persists, run: mcpauth login %s",
			mcpURL, oe.StatusCode, cred.Server))
	}
	if re := (*flows.ResourceError)(nil); cred.DPoP != nil && errors.As(err, &re) && re.RefusesDPoP() {
		return clierr.WithExit(clierr.ExitAuthRequired, errors.New(clierr.BearerOnly(mcpURL, re, cred.Server)))
	}
	if cred.FromEnv {
		return clierr.FlowError("ping with MCPAUTH_TOKEN", err)
	}
	return clierr.FlowError(fmt.Sprintf("ping %s (run: mcpauth login %s)", cred.BaseURL, cred.Server), err)
}

// identity says whom the credential belongs to, as the login found out,
// else as the token itself says (its sub, labelled: the server was not
// asked), for a server that has no /api/ping to say it.
func identity(cred creds.Credential) string {
	if u := cred.User.String(); u != "" {
		return " for " + u
	}
	if sub := creds.Subject(cred.Token); sub != "" {
		return " for " + sub + " (the token's sub)"
	}
	return ""
}

// The checks ping can make, as reported.
const (
	checkPing = "api/ping"
	checkMCP  = "mcp tools/list"
)

// renewalCause is the cause of a failed renewal in err, else err: ping
// reports why it could not renew, not the request it was for.
func renewalCause(err error) error {
	var re *flows.RenewalError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}
