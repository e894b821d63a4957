// Package status implements `mcpauth status`: what is stored, where, until when.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/keyring"
)

// Options are status's arguments.
type Options struct{ F *cmdutil.Factory }

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	return &cobra.Command{
		Use:     "status",
		Short:   "List stored credentials: server, account, user, kind, storage backend, expiry, refreshable",
		Example: "  mcpauth status\n  mcpauth status --output json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

type entry struct {
	Server    string    `json:"server"`
	Account   string    `json:"account"`
	UserID    string    `json:"user_id,omitempty"`
	Name      string    `json:"name,omitempty"`
	Kind      string    `json:"kind"`
	Backend   string    `json:"backend"`
	Encrypted bool      `json:"protected_by_keyring"`
	Expiry    time.Time `json:"expires_at,omitzero"`
	Expired   bool      `json:"expired"`
	// Refreshable: a refresh token is stored, so an expired access token
	// is renewed without a login; RefreshExpiry when the server said.
	Refreshable   bool      `json:"refreshable"`
	RefreshExpiry time.Time `json:"refresh_expires_at,omitzero"`
}

// Run lists entries.
func Run(_ context.Context, opts *Options) error {
	f := opts.F
	st, err := f.OpenStoreToRead()
	if err != nil {
		return err
	}
	infos, err := st.List()
	if err != nil {
		return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("listing stored credentials: %w", err))
	}
	ui := cmdutil.NewUI(f)
	if st.Storage() == keyring.StorageNone {
		ui.Warn("no OS keyring is available (%v): entries it protects cannot be read now; plain-file entries are read with --storage=file, or always after `mcpauth config set storage file`", cmdutil.KeyringCause(st.FallbackReason()))
	}
	now := f.Clock.Now()
	entries := make([]entry, 0, len(infos))
	for _, e := range infos {
		entries = append(entries, entry{
			Server: e.Server, Account: e.Account, UserID: e.UserID, Name: e.UserName, Kind: string(e.Kind), Backend: string(e.Backend),
			Encrypted: e.Backend == keyring.StorageKeyring, Expiry: e.Expiry,
			Expired:     !e.Expiry.IsZero() && !now.Before(e.Expiry),
			Refreshable: e.Refreshable, RefreshExpiry: e.RefreshExpiry,
		})
	}
	if f.Globals.JSON() {
		return cmdutil.WriteJSON(f.IO.Out, entries)
	}
	if len(entries) == 0 {
		ui.Info("No stored credentials. Log in with: mcpauth login <mcp-url>")
		return nil
	}
	t := tablefmt.Table{Columns: []tablefmt.Column{
		tablefmt.Col("SERVER", tablefmt.URL), tablefmt.Col("ACCOUNT", tablefmt.Fixed), tablefmt.Col("USER", tablefmt.Text), tablefmt.Col("KIND", tablefmt.Fixed),
		tablefmt.Col("STORAGE", tablefmt.Text), tablefmt.Col("EXPIRES", tablefmt.Text), tablefmt.Col("REFRESH", tablefmt.Text),
	}}
	plaintext := false
	for _, e := range entries {
		backend := e.Backend
		if !e.Encrypted {
			backend += " (no keyring!)"
			plaintext = true
		}
		user := cmdutil.User{ID: e.UserID, Name: e.Name}.String()
		if user == "" {
			user = "-" // stored before names were kept, or the server said nothing
		}
		t.Rows = append(t.Rows, []string{e.Server, e.Account, user, e.Kind, backend, expiry(e, now), refresh(e, now)})
	}
	fmt.Fprintln(f.IO.Out, tablefmt.Render(t, f.IO.TerminalWidth(), f.IO.StdoutTTY))
	if plaintext {
		ui.Warn("entries marked 'no keyring' are in files under %s protected only by file permissions", st.Dir())
	}
	return nil
}

func expiry(e entry, now time.Time) string {
	switch {
	case e.Expiry.IsZero():
		return "no expiry"
	case e.Expired:
		return "expired " + e.Expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s (in %s)", e.Expiry.UTC().Format(time.RFC3339), e.Expiry.Sub(now).Round(time.Minute))
}

func refresh(e entry, now time.Time) string {
	switch {
	case !e.Refreshable:
		return "no"
	case e.RefreshExpiry.IsZero():
		return "refreshable"
	case !now.Before(e.RefreshExpiry):
		return "expired " + e.RefreshExpiry.UTC().Format(time.RFC3339)
	}
	return "refreshable until " + e.RefreshExpiry.UTC().Format(time.RFC3339)
}
