// Package status implements `mcpauth status`: what is stored, where, until when.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/creds"
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
		RunE:    cmdutil.RunE(opts, nil, runF, Run),
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
	infos, err := creds.List(st)
	if err != nil {
		return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("listing stored credentials: %w", err))
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
	width := f.IO.TerminalWidth()
	list := make([]tablefmt.Entry, 0, len(entries))
	plaintext := false
	for _, e := range entries {
		backend := e.Backend
		if !e.Encrypted {
			backend += " (no keyring!)"
			plaintext = true
		}
		fields := []string{"account " + cmdutil.Field(e.Account), "user " + user(e, width > 0), e.Kind, backend, expiry(e, now)}
		if e.Kind != string(creds.KindAPIKey) { // an API key has no refresh token to speak of
			fields = append(fields, refresh(e, now))
		}
		list = append(list, tablefmt.Entry{Key: e.Server, Fields: fields})
	}
	// A list, as gh auth status prints: the server URL is each entry's
	// key and is never cut; the details give way to the width instead.
	fmt.Fprintln(f.IO.Out, tablefmt.List(list, width, nil))
	if plaintext {
		ui.Warn("entries marked 'no keyring' are in files under %s protected only by file permissions", st.Dir())
	}
	return nil
}

// user is the name with the id, or either alone, or "-" for entries stored
// before names were kept or when the server said nothing. short cuts a
// long id: in a terminal its first characters tell users apart. Both came
// from a server or a token: one value each (Field).
func user(e entry, short bool) string {
	id := cmdutil.Field(e.UserID)
	if r := []rune(id); short && e.Name != "" && len(r) > 10 {
		id = string(r[:8]) + "…"
	}
	if u := (creds.User{ID: id, Name: cmdutil.Field(e.Name)}).String(); u != "" {
		return u
	}
	return "-"
}

// expiry and refresh are relative ("in 23h"): the timestamps are in
// --output json.
func expiry(e entry, now time.Time) string {
	switch {
	case e.Expiry.IsZero():
		return "no expiry"
	case e.Expired:
		return "expired " + approx(now.Sub(e.Expiry)) + " ago"
	}
	return "expires in " + approx(e.Expiry.Sub(now))
}

func refresh(e entry, now time.Time) string {
	switch {
	case !e.Refreshable:
		return "not refreshable"
	case e.RefreshExpiry.IsZero():
		return "refreshable"
	case !now.Before(e.RefreshExpiry):
		return "refresh token expired " + approx(now.Sub(e.RefreshExpiry)) + " ago"
	}
	return "refreshable for " + approx(e.RefreshExpiry.Sub(now))
}

// approx is d in its largest whole unit, rounded down: 59m, 23h, 3d.
func approx(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
