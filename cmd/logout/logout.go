// Package logout implements `mcpauth logout`: forget stored credentials.
package logout

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Options are logout's flags.
type Options struct {
	F      *cmdutil.Factory
	Server string
	All    bool
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "logout [<mcp-url>]",
		Short: "Revoke and delete stored credentials",
		Long: `Revoke the stored token at the authorization server's revocation endpoint
(RFC 7009), when it has one, then delete it. The refresh token is revoked when
there is one (servers revoke its access tokens with it), else the access
token. A failed revocation is reported but the local credential is deleted
anyway.`,
		Example: "  mcpauth logout http://127.0.0.1:8080/mcp\n  mcpauth logout --all",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Server = args[0]
			}
			if opts.All && opts.Server != "" {
				return cmdutil.FlagErrorf("--all takes no server argument")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "delete every stored credential")
	return cmd
}

// Run revokes and deletes.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	ui := cmdutil.NewUI(f)
	st, err := f.OpenStoreToRead()
	if err != nil {
		return err
	}
	if opts.All {
		infos, err := creds.List(st)
		if err != nil {
			return cmdutil.WithExit(cmdutil.ExitStorage, err)
		}
		for _, e := range infos {
			revoke(ctx, f, ui, st, e)
			if err := st.Delete(e.Server, e.Account); err != nil {
				return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("deleting %s (%s): %w", e.Server, e.Account, err))
			}
			ui.Success("Logged out of %s (%s)", e.Server, e.Account)
		}
		if len(infos) == 0 {
			ui.Info("Nothing stored.")
		}
		return nil
	}
	e, err := creds.Resolve(st, opts.Server, f.Globals.Account)
	if err != nil {
		return err
	}
	revoke(ctx, f, ui, st, e)
	if err := st.Delete(e.Server, e.Account); err != nil {
		return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("deleting %s: %w", e.Server, err))
	}
	ui.Success("Logged out of %s (%s)", e.Server, e.Account)
	return nil
}

// revoke revokes e's token where the server offers revocation, and says
// what stays valid where it cannot: deleting a credential here does not end
// it at the server. Failures are warnings: logging out must still forget
// the credential locally.
func revoke(ctx context.Context, f *cmdutil.Factory, ui *cmdutil.UI, st *keyring.Store, e creds.Entry) {
	if e.Kind == creds.KindAPIKey {
		ui.Info("The API key still works at %s until it is regenerated there (Settings); only this copy is deleted.", e.Server)
		return
	}
	b, err := creds.Load(st, e.Server, e.Account)
	if err != nil {
		return
	}
	if b.RevocationEndpoint == "" || b.Client == nil {
		until := "its expiry"
		if !b.Expiry.IsZero() {
			until = b.Expiry.Format("2006-01-02 15:04 MST")
		}
		what := "The access token stays valid until " + until
		if b.RefreshToken != "" {
			what += ", and the refresh token until the server's own limit"
		}
		ui.Info("%s: %s offers no revocation endpoint; only this copy is deleted.", what, e.Server)
		return
	}
	token, hint := b.RefreshToken, "refresh_token"
	if token == "" {
		token, hint = b.AccessToken, "access_token"
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return
	}
	client := flows.Client{ID: b.Client.ClientID, Secret: b.Client.ClientSecret, AuthMethod: b.Client.TokenEndpointAuthMethod}
	if client.AuthMethod == "" {
		client.AuthMethod = flows.AuthMethodNone
		if client.Secret != "" {
			client.AuthMethod = flows.AuthMethodBasic
		}
	}
	if err := flows.Revoke(ctx, hc, b.RevocationEndpoint, client, token, hint); err != nil {
		ui.Warn("could not revoke the token at %s (%v); deleting it locally anyway", b.RevocationEndpoint, err)
		return
	}
	ui.Info("Revoked the %s at %s", strings.ReplaceAll(hint, "_", " "), b.RevocationEndpoint)
}
