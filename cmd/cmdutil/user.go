package cmdutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// User is who a credential belongs to, for display.
type User struct {
	ID   string `json:"user_id,omitempty"`
	Name string `json:"name,omitempty"`
}

// String is "NAME (ID)", "ID" or "".
func (u User) String() string {
	switch {
	case u.Name != "" && u.ID != "":
		return u.Name + " (" + u.ID + ")"
	case u.Name != "":
		return u.Name
	}
	return u.ID
}

// LookupUser asks the server who token belongs to with one GET /api/ping,
// where the server offers it; the name is an extension some servers add.
// Best effort: any failure leaves what the token itself says (its sub). A
// DPoP-bound token (key non-nil) is presented with a proof.
func (f *Factory) LookupUser(ctx context.Context, disc *flows.Discovery, token string, key *flows.DPoP) User {
	u := User{ID: Subject(token)}
	hc, err := f.HTTPClient()
	if err != nil {
		return u
	}
	if key != nil {
		o, err := flows.OriginOf(disc.Resource)
		if err != nil {
			return u
		}
		hc = key.Client(hc, o, token)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	base := PingBase(keyring.TokenBundle{Resource: disc.Resource, Issuer: disc.Issuer}, disc.Resource)
	res, err := flows.Ping(ctx, hc, base, token)
	if err != nil {
		return u
	}
	if res.UserID != "" {
		u.ID = res.UserID
	}
	u.Name = res.Name
	return u
}

// describeEntry says what a stored entry holds, for the replace notice:
// "OAuth token for mona (u_1), expires 2026-…".
func describeEntry(e keyring.EntryInfo) string {
	var b strings.Builder
	if e.Kind == keyring.KindAPIKey {
		b.WriteString("API key")
	} else {
		b.WriteString("OAuth token")
	}
	if who := (User{ID: e.UserID, Name: e.UserName}).String(); who != "" {
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
	entries, err := st.List()
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
