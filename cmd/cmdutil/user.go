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

// RevokeStored revokes a credential this machine is about to forget (a
// logout, a login or key that replaces it) where the server can, and
// otherwise says what stays valid at the server; done says what happens
// to the local copy. Failures are warnings.
func (f *Factory) RevokeStored(ctx context.Context, server string, b creds.Bundle, done string) {
	ui := NewUI(f)
	hc, err := f.HTTPClient()
	if err != nil {
		return
	}
	what, err := creds.Revoke(ctx, hc, b)
	switch {
	case err == nil:
		ui.Info("Revoked the %s at %s.", what, b.RevocationEndpoint)
	case errors.Is(err, creds.ErrNotRevocable) && b.Kind == creds.KindAPIKey:
		ui.Info("The API key still works at %s until it is regenerated there (Settings); %s.", server, Message(done))
	case errors.Is(err, creds.ErrNotRevocable):
		until := "its expiry"
		if !b.Expiry.IsZero() {
			until = b.Expiry.Format("2006-01-02 15:04 MST")
		}
		stays := "The access token stays valid until " + until
		if b.RefreshToken != "" {
			stays += ", and the refresh token until the server's own limit"
		}
		ui.Info("%s: %s offers no revocation endpoint; %s.", Message(stays), server, Message(done))
	default:
		ui.Warn("could not revoke the token at %s (%v); %s anyway", b.RevocationEndpoint, err, Message(done))
	}
}

// Replaced is the credential stored for (server, account) that a new one
// is about to replace, if any.
func Replaced(st *keyring.Store, server, account string) (creds.Bundle, bool) {
	b, err := creds.Load(st, server, account)
	return b, err == nil
}

// RevokeReplaced revokes the credential a new one replaced (see
// RevokeStored), and says how to keep both next time.
func (f *Factory) RevokeReplaced(ctx context.Context, server string, old creds.Bundle) {
	f.RevokeStored(ctx, server, old, "it was replaced here (to keep several credentials for one server, pass --account NAME)")
}
