package login

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/loginflow"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// MachineOptions are login's flags for logins without a user at a browser:
// the client credentials grant, the JWT bearer grant with a workload
// identity token, and enterprise-managed authorization (ID-JAG).
type MachineOptions struct {
	ClientCredentials bool
	PrivateKeyFile    string
	SigningAlg        string
	KeyID             string
	TokenAuth         string // basic or post, for a secret
	AssertionAudience string
	DPoP, NoDPoP      bool
	AssertionFile     string
	IDTokenFile       string
	IdPTokenEndpoint  string
	IdPClientID       string
	IdPClientSecret   string
}

// Environment variables for secrets and keys, so they stay off command lines.
const (
	envClientSecret    = "MCPAUTH_CLIENT_SECRET"
	envPrivateKeyFile  = "MCPAUTH_PRIVATE_KEY_FILE"
	envAssertion       = "MCPAUTH_JWT_BEARER_ASSERTION"
	envIdPClientSecret = "MCPAUTH_IDP_CLIENT_SECRET"
)

func (m *MachineOptions) bind(fl *pflag.FlagSet) {
	fl.BoolVar(&m.ClientCredentials, "client-credentials", false, "log in as the client itself (client credentials grant): needs --client-id and a secret or --private-key-file")
	fl.StringVar(&m.PrivateKeyFile, "private-key-file", "", "PEM private key for private_key_jwt client authentication (env "+envPrivateKeyFile+")")
	fl.StringVar(&m.SigningAlg, "signing-alg", "", "JWS algorithm for client assertions: RS256, PS256, ES256, EdDSA, … (default: from the key)")
	fl.StringVar(&m.KeyID, "key-id", "", "kid header of client assertions, for servers that hold several keys of the client")
	fl.StringVar(&m.TokenAuth, "token-auth", "", "how a client secret is sent: basic (client_secret_basic, default) or post (client_secret_post)")
	fl.StringVar(&m.AssertionAudience, "assertion-audience", flows.AudienceIssuer, "aud of client assertions: issuer (rfc7523bis) or token-endpoint (older servers)")
	fl.BoolVar(&m.DPoP, "dpop", false, "bind tokens to a key (DPoP, RFC 9449); automatic when the MCP server says it takes DPoP")
	fl.BoolVar(&m.NoDPoP, "no-dpop", false, "do not use DPoP even when the MCP server takes it")
	fl.StringVar(&m.AssertionFile, "jwt-bearer-assertion-file", "", "file holding a JWT (workload identity token) for the JWT bearer grant (or the JWT itself in env "+envAssertion+")")
	fl.StringVar(&m.IDTokenFile, "id-token-file", "", "enterprise-managed authorization: file holding your ID token from the enterprise IdP")
	fl.StringVar(&m.IdPTokenEndpoint, "idp-token-endpoint", "", "enterprise-managed authorization: the IdP's token endpoint, where the ID token is exchanged for an ID-JAG")
	fl.StringVar(&m.IdPClientID, "idp-client-id", "", "enterprise-managed authorization: this client's id at the IdP")
	fl.StringVar(&m.IdPClientSecret, "idp-client-secret", "", "enterprise-managed authorization: this client's secret at the IdP (env "+envIdPClientSecret+")")
}

// machineGrant says which machine grant the options ask for ("" for the
// browser login).
func (opts *Options) machineGrant() string {
	m := &opts.Machine
	switch {
	case m.ClientCredentials:
		return creds.GrantClientCredentials
	case m.IDTokenFile != "" || m.IdPTokenEndpoint != "":
		return creds.GrantEnterprise
	case m.AssertionFile != "" || opts.F.Getenv(envAssertion) != "":
		return creds.GrantJWTBearer
	}
	return ""
}

// checkBrowserLogin refuses machine-only flags on a browser login, where
// they would be silently ignored.
func (m *MachineOptions) checkBrowserLogin() error {
	for flag, set := range map[string]bool{
		"--private-key-file": m.PrivateKeyFile != "", "--signing-alg": m.SigningAlg != "",
		"--key-id": m.KeyID != "", "--token-auth": m.TokenAuth != "", "--idp-client-id": m.IdPClientID != "",
		"--idp-client-secret": m.IdPClientSecret != "", "--assertion-audience": m.AssertionAudience != "" && m.AssertionAudience != flows.AudienceIssuer,
	} {
		if set {
			return clierr.FlagErrorf("%s applies to machine logins (--client-credentials, --jwt-bearer-assertion-file, --id-token-file)", flag)
		}
	}
	return nil
}

// machineBundle checks the flags and builds what the grant needs and the store
// keeps; nothing secret comes from anywhere but flags and the environment.
func (opts *Options) machineBundle(grant string) (creds.Bundle, error) {
	m, getenv := &opts.Machine, opts.F.Getenv
	secret := cmp.Or(opts.ClientSecret, getenv(envClientSecret))
	keyFile := cmp.Or(m.PrivateKeyFile, getenv(envPrivateKeyFile))
	switch {
	case secret != "" && keyFile != "":
		return creds.Bundle{}, clierr.FlagErrorf("give a client secret or a private key, not both")
	case grant == creds.GrantClientCredentials && opts.ClientID == "":
		return creds.Bundle{}, clierr.FlagErrorf("--client-credentials needs --client-id")
	case grant == creds.GrantClientCredentials && secret == "" && keyFile == "":
		return creds.Bundle{}, clierr.FlagErrorf("--client-credentials needs --client-secret (or %s) or --private-key-file (or %s)", envClientSecret, envPrivateKeyFile)
	case (secret != "" || keyFile != "") && opts.ClientID == "":
		return creds.Bundle{}, clierr.FlagErrorf("a client secret or private key needs --client-id")
	case m.TokenAuth != "" && secret == "":
		return creds.Bundle{}, clierr.FlagErrorf("--token-auth applies to a client secret")
	case (m.SigningAlg != "" || m.KeyID != "") && keyFile == "":
		return creds.Bundle{}, clierr.FlagErrorf("--signing-alg and --key-id apply to --private-key-file")
	case m.AssertionAudience != flows.AudienceTokenEndpoint && m.AssertionAudience != flows.AudienceIssuer:
		return creds.Bundle{}, clierr.FlagErrorf("--assertion-audience must be %s or %s", flows.AudienceTokenEndpoint, flows.AudienceIssuer)
	case grant == creds.GrantEnterprise && (m.IDTokenFile == "" || m.IdPTokenEndpoint == "" || m.IdPClientID == ""):
		return creds.Bundle{}, clierr.FlagErrorf("enterprise-managed authorization needs --id-token-file, --idp-token-endpoint and --idp-client-id")
	}
	client := &creds.ClientInfo{ClientID: opts.ClientID, TokenEndpointAuthMethod: flows.AuthMethodNone}
	switch {
	case keyFile != "":
		// Checked now, so a bad key is a usage error before any request.
		if _, err := flows.LoadSigner(keyFile, m.SigningAlg); err != nil {
			return creds.Bundle{}, clierr.WithExit(clierr.ExitUsage, err)
		}
		client.TokenEndpointAuthMethod = flows.AuthMethodPrivateKeyJWT
	case secret != "":
		client.ClientSecret = secret
		switch m.TokenAuth {
		case "", "basic", flows.AuthMethodBasic:
			client.TokenEndpointAuthMethod = flows.AuthMethodBasic
		case "post", flows.AuthMethodPost:
			client.TokenEndpointAuthMethod = flows.AuthMethodPost
		default:
			return creds.Bundle{}, clierr.FlagErrorf("--token-auth must be basic or post")
		}
	}
	g := &creds.GrantInfo{Type: grant, Scope: opts.Scope, NoResource: opts.NoResource,
		PrivateKeyFile: keyFile, SigningAlg: m.SigningAlg, KeyID: m.KeyID, AssertionAudience: m.AssertionAudience,
		AllowInsecureKeyFile: opts.AllowInsecureKeyFile}
	switch grant {
	case creds.GrantJWTBearer:
		if m.AssertionFile != "" {
			g.AssertionFile = m.AssertionFile
		} else {
			g.AssertionEnv = envAssertion
		}
	case creds.GrantEnterprise:
		g.IDTokenFile, g.IdPTokenEndpoint = m.IDTokenFile, m.IdPTokenEndpoint
		idp := &creds.ClientInfo{ClientID: m.IdPClientID, TokenEndpointAuthMethod: flows.AuthMethodNone}
		if s := cmp.Or(m.IdPClientSecret, getenv(envIdPClientSecret)); s != "" {
			idp.ClientSecret, idp.TokenEndpointAuthMethod = s, flows.AuthMethodBasic
		}
		g.IdPClient = idp
	}
	// Before any request too; renewals check again (MachineGrant).
	if err := creds.CheckGrantFiles(g); err != nil {
		return creds.Bundle{}, err
	}
	b := creds.Bundle{Kind: creds.KindOAuth, Grant: g}
	if client.ClientID != "" {
		b.Client = client
	}
	return b, nil
}

// runMachine logs in with a machine grant: discovery as usual, then the
// grant at the token endpoint; the token is stored like any login, with what
// renewing it needs. Nothing is stored when any step fails.
func runMachine(ctx context.Context, opts *Options, grant string) error {
	f := opts.F
	b, err := opts.machineBundle(grant)
	if err != nil {
		return err
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	disc, err := machineDiscover(ctx, f, opts)
	if err != nil {
		return err
	}
	md := disc.AuthServer
	if md.TokenEndpoint == "" {
		return clierr.WithExit(clierr.ExitNetwork, fmt.Errorf("%s has no token_endpoint", disc.Issuer))
	}
	b.Issuer, b.Resource, b.Grant.TokenEndpoint = disc.Issuer, disc.Resource, md.TokenEndpoint
	if b.Grant.Scope == "" {
		b.Grant.Scope = oauthwire.MachineScope(disc.Scope)
	}
	server := creds.ServerKey(disc.Resource)

	key, err := f.LoginDPoP(st, disc, cmdutil.DPoPChoice{Insist: opts.Machine.DPoP, Refuse: opts.Machine.NoDPoP})
	if err != nil {
		return err
	}
	if key != nil {
		if b.DPoPKey, err = key.MarshalKey(); err != nil {
			return err
		}
	}
	tok, d, err := f.Keeper().MachineGrant(ctx, b)
	if err != nil {
		return clierr.FlowError(loginflow.LoggingIn(err), err)
	}
	if err := b.Fill(tok, d); err != nil {
		return err
	}
	if err := creds.Save(st, server, f.Globals.Account, b); err != nil {
		return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("storing the token: %w", err))
	}
	// A machine's token names a client, not a person: no user to look up.
	return f.ReportLogin(disc, tok, st, creds.User{})
}

// machineDiscover is discovery without the PKCE S256 requirement, which
// protects the authorization code only: a server for machines need not
// list it. The other checks (issuer, resource, https endpoints) stay.
func machineDiscover(ctx context.Context, f *cmdutil.Factory, opts *Options) (*flows.Discovery, error) {
	if opts.Discover.AllowMissingS256 {
		return f.Discover(ctx, opts.Target, opts.Discover) // says it is unsafe
	}
	df := opts.Discover
	df.AllowMissingS256 = true
	// No UNSAFE banner for a check that does not apply: discovery's own
	// messages go nowhere (its errors are returned, the --debug trace is
	// bound to the real stderr when the HTTP client is built).
	quiet, ios := *f, *f.IO
	ios.ErrOut = io.Discard
	quiet.IO = &ios
	return quiet.Discover(ctx, opts.Target, df)
}
