package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// describeEntry says what a stored entry holds, for the replace notice:
// "OAuth token for mona (u_1), expires 2026-…", a sentence around the
// stored user's name, which is one value (Field).
func describeEntry(e creds.Entry) Message {
	var b strings.Builder
	if e.Kind == creds.KindAPIKey {
		b.WriteString("API key")
	} else {
		b.WriteString("OAuth token")
	}
	if who := (creds.User{ID: e.UserID, Name: e.UserName}).String(); who != "" {
		b.WriteString(" for " + Field(who))
	}
	if !e.Expiry.IsZero() {
		b.WriteString(", expires " + e.Expiry.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, ", saved %s", e.UpdatedAt.UTC().Format(time.RFC3339))
	return Message(b.String())
}

// NoteReplace tells the user, before anything happens, that storing a new
// credential for (server, account) will replace the one already stored;
// condition, if any, says when (" if this login succeeds").
func (f *Factory) NoteReplace(st *keyring.Store, server, account, condition string) {
	entries, err := creds.List(st)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Server == server && e.Account == account {
			NewUI(f).Info("A credential for %s is already stored (account %q: %s); it will be replaced%s.", server, account, describeEntry(e), condition)
			return
		}
	}
}

// Dropped is a stored credential this machine is about to forget: its
// bundle, or, when that cannot be read (the OS keyring that seals it is
// unavailable), what the index says of it and why it could not be read.
type Dropped struct {
	Bundle  creds.Bundle
	Entry   creds.Entry
	ReadErr error
}

// ToDrop reads what is stored for (server, account) before it is dropped,
// in whichever storage holds it: false when nothing is stored.
func ToDrop(st *keyring.Store, server, account string) (Dropped, bool) {
	if account == "" {
		account = keyring.DefaultAccount
	}
	b, err := creds.LoadToDrop(st, server, account)
	if err == nil {
		return Dropped{Bundle: b}, true
	}
	entries, lerr := creds.List(st)
	if lerr != nil {
		return Dropped{}, false
	}
	for _, e := range entries {
		if e.Server == server && e.Account == account {
			return Dropped{Entry: e, ReadErr: err}, true
		}
	}
	return Dropped{}, false
}

// RevokeDropped revokes a credential this machine is about to forget (a
// logout, a login or key that replaces it) where the server can, and
// otherwise says what stays valid at the server and until when; done says
// what happens to the local copy. Failures are warnings. It reports
// whether the credential ended at the server or nothing is left to say.
func (f *Factory) RevokeDropped(ctx context.Context, server string, d Dropped, done string) bool {
	if d.ReadErr == nil {
		return f.revokeStored(ctx, server, d.Bundle, done)
	}
	e := d.Entry
	stays := "The API key still works until it is regenerated at the server"
	if e.Kind != creds.KindAPIKey {
		stays = staysValid(e.Expiry, e.Refreshable, e.RefreshExpiry)
	}
	NewUI(f).Warn("could not read the credential for %s to revoke it (%v): nothing was revoked. %s; %s",
		server, KeyringCause(d.ReadErr), Message(stays), Message(done))
	return false
}

// staysValid says until when an unrevoked OAuth token stays valid.
func staysValid(expiry time.Time, refreshable bool, refreshExpiry time.Time) string {
	until := func(t time.Time, unknown string) string {
		if t.IsZero() {
			return unknown
		}
		return t.Format("2006-01-02 15:04 MST")
	}
	stays := "The access token stays valid until " + until(expiry, "its expiry")
	if refreshable {
		stays += ", and the refresh token until " + until(refreshExpiry, "the server's own limit")
	}
	return stays
}

func (f *Factory) revokeStored(ctx context.Context, server string, b creds.Bundle, done string) bool {
	ui := NewUI(f)
	hc, err := f.HTTPClient()
	if err != nil {
		ui.Warn("could not revoke the token (%v); %s anyway", err, Message(done))
		return false
	}
	what, err := creds.Revoke(ctx, hc, b)
	switch {
	case err == nil:
		ui.Info("Revoked the %s at %s.", what, b.RevocationEndpoint)
	case errors.Is(err, creds.ErrNotRevocable) && b.Kind == creds.KindAPIKey:
		ui.Info("The API key still works at %s until it is regenerated there (Settings); %s.", server, Message(done))
	case errors.Is(err, creds.ErrNotRevocable):
		stays := staysValid(b.Expiry, b.RefreshToken != "", b.RefreshExpiry)
		ui.Info("%s: %s offers no revocation endpoint; %s.", Message(stays), server, Message(done))
	default:
		ui.Warn("could not revoke the token at %s (%v); %s anyway", b.RevocationEndpoint, err, Message(done))
		return false
	}
	return true
}

// RevokeReplaced revokes the credential a new one replaced (see
// RevokeDropped), and says how to keep both next time.
func (f *Factory) RevokeReplaced(ctx context.Context, server string, old Dropped) {
	f.RevokeDropped(ctx, server, old, "it was replaced here (to keep several credentials for one server, pass --account NAME)")
}
