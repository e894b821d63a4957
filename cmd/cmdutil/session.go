package cmdutil

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// ServerKey is how stored credentials are keyed: the canonical MCP resource.
func ServerKey(resource string) string {
	if c, err := flows.CanonicalResource(resource); err == nil {
		return c
	}
	return resource
}

// StoreKey is the key a login's token is stored under: the canonical
// resource, or the MCP URL when the resource is the origin or a path prefix
// of it (a root protected resource metadata document), so that commands
// naming the MCP URL find it.
func StoreKey(disc *flows.Discovery) string {
	if disc.MCPURL != "" && ServerKey(disc.Resource) != ServerKey(disc.MCPURL) && flows.ResourceCovers(disc.Resource, disc.MCPURL) {
		return ServerKey(disc.MCPURL)
	}
	return ServerKey(disc.Resource)
}

// ResolveServer picks the stored server a command is about: the argument
// (an MCP URL or its base URL), or the only stored server when none is given.
func ResolveServer(st *keyring.Store, arg, account string) (keyring.EntryInfo, error) {
	entries, err := st.List()
	if err != nil {
		return keyring.EntryInfo{}, WithExit(ExitStorage, fmt.Errorf("listing stored credentials: %w", err))
	}
	var mine []keyring.EntryInfo
	for _, e := range entries {
		if e.Account == account || account == "" && e.Account == keyring.DefaultAccount {
			mine = append(mine, e)
		}
	}
	if arg == "" {
		switch len(mine) {
		case 0:
			return keyring.EntryInfo{}, WithExit(ExitAuthRequired, errors.New("not logged in to any server; run: mcpauth login <mcp-url>"))
		case 1:
			return mine[0], nil
		}
		var names []string
		for _, e := range mine {
			names = append(names, e.Server)
		}
		sort.Strings(names)
		return keyring.EntryInfo{}, FlagErrorf("logged in to several servers; name one of:\n  %s", strings.Join(names, "\n  "))
	}
	want := []string{ServerKey(arg), ServerKey(strings.TrimSuffix(arg, "/") + "/mcp")}
	for _, e := range mine {
		for _, w := range want {
			if e.Server == w {
				return e, nil
			}
		}
	}
	return keyring.EntryInfo{}, WithExit(ExitAuthRequired, fmt.Errorf("no stored credential for %s; run: mcpauth login %s", arg, arg))
}

// SaveToken stores a token from a flow, with the DPoP key it is bound to
// (nil for Bearer).
func SaveToken(st *keyring.Store, account string, disc *flows.Discovery, client flows.Client, tok *flows.Token, d *flows.DPoP, user User) error {
	b := keyring.TokenBundle{
		UserID: user.ID, UserName: user.Name, Issuer: disc.Issuer, Resource: disc.Resource,
		TokenEndpoint: disc.AuthServer.TokenEndpoint, RevocationEndpoint: disc.AuthServer.RevocationEndpoint,
		Client: &keyring.ClientInfo{ClientID: client.ID, ClientSecret: client.Secret, TokenEndpointAuthMethod: client.AuthMethod, RedirectURIs: client.RedirectURIs},
	}
	if err := FillToken(&b, tok, d); err != nil {
		return err
	}
	if err := st.Save(StoreKey(disc), account, b); err != nil {
		return WithExit(ExitStorage, fmt.Errorf("storing the token: %w", err))
	}
	return nil
}

// RegistrationCache adapts the keyring store to flows.RegistrationCache.
type RegistrationCache struct{ Store *keyring.Store }

// Get returns a cached registration.
func (c RegistrationCache) Get(issuer, resource string) (*flows.ClientInformation, bool) {
	data, ok := c.Store.GetRegistration(issuer, resource)
	if !ok {
		return nil, false
	}
	var ci flows.ClientInformation
	if json.Unmarshal(data, &ci) != nil || ci.ClientID == "" {
		return nil, false
	}
	return &ci, true
}

// Put caches a registration.
func (c RegistrationCache) Put(issuer, resource string, ci *flows.ClientInformation) error {
	data, err := json.Marshal(ci)
	if err != nil {
		return err
	}
	return c.Store.PutRegistration(issuer, resource, data)
}

// PingBase is where /api/ping lives for a stored credential: the resource
// without its /mcp path, else the resource's origin. Never the issuer: the
// access token goes to the MCP server's origin only, and an answer from the
// authorization server says nothing about the MCP server.
func PingBase(b keyring.TokenBundle, server string) string {
	res := cmp.Or(b.Resource, server)
	if strings.HasSuffix(res, "/mcp") {
		return strings.TrimSuffix(res, "/mcp")
	}
	if o, err := flows.OriginOf(res); err == nil {
		return o.String()
	}
	return res
}

// DiscoverFlags are the discovery options login, device and register share.
type DiscoverFlags struct {
	AllowMissingS256 bool
	AllowInsecure    bool
	bound            bool // the command has the flags, so errors may name them
}

// Bind adds the unsafe discovery overrides to a command's flags.
func (d *DiscoverFlags) Bind(fl *pflag.FlagSet) {
	d.bound = true
	fl.BoolVar(&d.AllowMissingS256, "allow-missing-s256", false, "UNSAFE: continue when the server does not advertise PKCE S256")
	fl.BoolVar(&d.AllowInsecure, "allow-insecure-http", false, "UNSAFE: allow plain http to non-loopback hosts")
}

// Discover runs discovery with the factory's client.
func (f *Factory) Discover(ctx context.Context, target string, df DiscoverFlags) (*flows.Discovery, error) {
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
		return disc, discoveryError(target, disc, err, df)
	}
	for _, w := range disc.Warnings {
		NewUI(f).Warn("%s", w)
	}
	return disc, nil
}

// NoteMigration says, in one line, when the resource's authorization server
// is no longer the one its stored credential came from (SEP-2352). Nothing
// of the old server's is used with the new one: registrations are cached per
// (issuer, resource), and the stored tokens are replaced, never refreshed
// at or sent to the new server.
func NoteMigration(f *Factory, st *keyring.Store, disc *flows.Discovery) {
	b, err := st.Load(ServerKey(disc.Resource), f.Globals.Account)
	if err != nil || b.Kind != keyring.KindOAuth || b.Issuer == "" || b.Issuer == disc.Issuer {
		return
	}
	NewUI(f).Info("The authorization server of %s moved from %s to %s: registering with the new one; the old credentials are not sent to it.", disc.Resource, b.Issuer, disc.Issuer)
}
