package cmdutil

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// describeEntry says what a stored entry holds, for the replace notice:
// "OAuth token for mona (u_1), expires 2026-…".
func describeEntry(e creds.Entry) string {
	var b strings.Builder
	if e.Kind == creds.KindAPIKey {
		b.WriteString("API key")
	} else {
		b.WriteString("OAuth token")
	}
	if who := (creds.User{ID: e.UserID, Name: e.UserName}).String(); who != "" {
		b.WriteString(" for " + who)
	}
	if !e.Expiry.IsZero() {
		b.WriteString(", expires " + e.Expiry.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, ", saved %s", e.UpdatedAt.UTC().Format(time.RFC3339))
	return b.String()
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
