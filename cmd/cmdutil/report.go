package cmdutil

import (
	"time"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// LoginResult is what login and device print with --output json.
type LoginResult struct {
	Resource  string          `json:"resource"`
	Issuer    string          `json:"issuer"`
	User      string          `json:"user,omitempty"`
	Name      string          `json:"name,omitempty"`
	Scope     string          `json:"scope,omitempty"`
	ExpiresAt time.Time       `json:"expires_at,omitzero"`
	Storage   keyring.Storage `json:"storage"`
	Account   string          `json:"account"`
}

// ReportLogin tells the user a flow succeeded: JSON on stdout, or a success
// line on stderr.
func (f *Factory) ReportLogin(disc *flows.Discovery, tok *flows.Token, st *keyring.Store, user creds.User) error {
	res := LoginResult{
		Resource: disc.Resource, Issuer: disc.Issuer, User: user.ID, Name: user.Name, Scope: tok.Scope,
		ExpiresAt: tok.Expiry, Storage: st.Storage(), Account: f.Globals.Account,
	}
	if f.Globals.JSON() {
		return WriteJSON(f.IO.Out, res)
	}
	ui := NewUI(f)
	// The resource and the user are values (the UI bounds each); the
	// sentence around them is ours.
	format, args := "Logged in to %s", []any{res.Resource}
	if user.String() != "" {
		format, args = format+" as %s", append(args, user)
	}
	if !res.ExpiresAt.IsZero() {
		format, args = format+" (token expires %s)", append(args, res.ExpiresAt.UTC().Format(time.RFC3339))
	}
	ui.Success(format, args...)
	where := "the OS keyring"
	if st.Storage() == keyring.StorageFile {
		where = "a plain file without keyring protection (" + st.Dir() + ")"
	}
	ui.Info("Stored in %s, account %q.", Message(where), res.Account)
	return nil
}
