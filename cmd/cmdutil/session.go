package cmdutil

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// DiscoverFlags are the discovery options login, device and register share.
type DiscoverFlags struct {
	AllowMissingS256 bool
	AllowInsecure    bool
	// RegistrationEndpoint names a dynamic registration endpoint the
	// server's metadata does not advertise (some servers register clients
	// without saying so).
	RegistrationEndpoint string
	bound                bool // the command has the flags, so errors may name them
}

// Bind adds the unsafe discovery overrides to a command's flags.
func (d *DiscoverFlags) Bind(fl *pflag.FlagSet) {
	d.bound = true
	fl.BoolVar(&d.AllowMissingS256, "allow-missing-s256", false, "UNSAFE: continue when the server does not advertise PKCE S256")
	fl.BoolVar(&d.AllowInsecure, "allow-insecure-http", false, "UNSAFE: allow plain http to non-loopback hosts")
	fl.StringVar(&d.RegistrationEndpoint, "registration-endpoint", "", "dynamic registration endpoint (RFC 7591) to use when the server's metadata does not advertise one")
}

// Discover checks target (ParseTarget: a command's <mcp-url>) and runs
// discovery on it with the factory's client.
func (f *Factory) Discover(ctx context.Context, target string, df DiscoverFlags) (*flows.Discovery, error) {
	target, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	if df.AllowMissingS256 {
		NewUI(f).Unsafe("--allow-missing-s256: continuing without PKCE S256 leaves the login open to code interception")
	}
	if df.AllowInsecure {
		NewUI(f).Unsafe("--allow-insecure-http: tokens may travel in clear text to a non-loopback host")
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return nil, err
	}
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{HTTPClient: hc, AllowMissingS256: df.AllowMissingS256, AllowInsecureHTTP: df.AllowInsecure}, target)
	if err != nil {
		return disc, clierr.Discovery(target, disc, err, df.bound)
	}
	for _, w := range disc.Warnings {
		NewUI(f).Warn("%s", Message(w))
	}
	if df.RegistrationEndpoint != "" {
		o, err := flows.OriginOf(df.RegistrationEndpoint)
		if err != nil {
			return disc, clierr.FlagErrorf("--registration-endpoint: %v", err)
		}
		if !o.Secure() && !df.AllowInsecure {
			return disc, clierr.FlagErrorf("--registration-endpoint %s is plain http to a host that is not loopback; pass --allow-insecure-http to accept it (unsafe)", df.RegistrationEndpoint)
		}
		if md := disc.AuthServer; md.RegistrationEndpoint != "" && md.RegistrationEndpoint != df.RegistrationEndpoint {
			NewUI(f).Warn("using --registration-endpoint %s instead of the advertised %s", df.RegistrationEndpoint, md.RegistrationEndpoint)
		}
		disc.AuthServer.RegistrationEndpoint = df.RegistrationEndpoint
	}
	return disc, nil
}

// Migration is a login that follows a resource to another authorization
// server (SEP-2352). The new server decides whose account the login is, and
// it may not be the stored one's: the user is told where the login goes
// before the browser opens, and whom it signed in as afterwards, in
// warnings that --quiet does not silence.
type Migration struct {
	from string     // the old authorization server's issuer
	user creds.User // whom the stored credential belonged to
}

// NoteMigration says, in one line, when the resource's authorization server
// is no longer the one its stored credential came from, and returns the
// move (nil when there is none). Nothing of the old server's is used with
// the new one: registrations are cached per (issuer, resource), and the
// stored tokens are replaced, never refreshed at or sent to the new server.
func NoteMigration(f *Factory, st *keyring.Store, disc *flows.Discovery) *Migration {
	b, err := creds.Load(st, creds.ServerKey(disc.Resource), f.Globals.Account)
	if err != nil || b.Kind != creds.KindOAuth || b.Issuer == "" || b.Issuer == disc.Issuer {
		return nil
	}
	NewUI(f).Warn("The authorization server of %s moved from %s to %s: logging in at %s, which decides the account; the old credentials are not sent to it.",
		disc.Resource, b.Issuer, disc.Issuer, disc.Issuer)
	return &Migration{from: b.Issuer, user: creds.User{ID: b.UserID, Name: b.UserName}}
}

// Done names the account the login at the new authorization server signed
// in as, beside the old one. A nil Migration says nothing.
func (m *Migration) Done(f *Factory, disc *flows.Discovery, user creds.User) {
	if m == nil {
		return
	}
	NewUI(f).Warn("%s is now logged in at %s as %s (before: %s at %s).", disc.Resource, disc.Issuer, account(user), account(m.user), m.from)
}

// account is a user as a migration note names it: the server's words,
// which the UI's printing rule escapes.
func account(u creds.User) string {
	if s := u.String(); s != "" {
		return s
	}
	return "an account the server did not name"
}
