package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/mcpauth/mcpauth/flows"
)

// Identity is who a login says the user is, for display only: people
// recognise themselves by name or email, not by an opaque sub. Nothing
// decides anything on it.
type Identity struct {
	Subject           string `json:"sub,omitempty"`
	Name              string `json:"name,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
	Email             string `json:"email,omitempty"`
}

// Display is the name to show: name, then preferred_username, then email;
// "" when the ID token gave none (the caller falls back to an id).
func (i Identity) Display() string {
	for _, s := range []string{i.Name, i.PreferredUsername, i.Email} {
		if s != "" {
			return s
		}
	}
	return ""
}

// ErrNoIDToken: the token response carried no ID token, or the server
// publishes no keys to check one with.
var ErrNoIDToken = errors.New("no ID token to read")

// LoginIdentity reads the identity in tok's ID token after checking it
// with go-oidc (OpenID Connect Core §3.1.3.7): signature against the
// issuer's jwks_uri, iss the discovered issuer, aud the client, not
// expired at clk's now. A token that fails any check is not read: a forged
// ID token never names the user. The userinfo endpoint is not asked: it
// would take the access token, which goes only to the MCP server's origin,
// and a token bound to the MCP resource (RFC 8707) is not for it anyway.
func LoginIdentity(ctx context.Context, hc *http.Client, clk flows.Clock, disc *flows.Discovery, clientID string, tok *flows.Token) (Identity, error) {
	if clk == nil {
		clk = flows.RealClock{}
	}
	if tok == nil || tok.IDToken == "" || disc == nil || disc.AuthServer == nil || disc.AuthServer.JWKSURI == "" {
		return Identity{}, ErrNoIDToken
	}
	// Keys are fetched from where the issuer's metadata says, confined to
	// that origin; they carry no credential, but a redirect elsewhere would
	// let another origin choose the keys.
	keysClient, err := flows.ConfineTo(hc, disc.AuthServer.JWKSURI)
	if err != nil {
		return Identity{}, fmt.Errorf("jwks_uri: %w", err)
	}
	ctx = oidc.ClientContext(ctx, keysClient)
	keys := oidc.NewRemoteKeySet(ctx, disc.AuthServer.JWKSURI)
	v := oidc.NewVerifier(disc.AuthServer.Issuer, keys, &oidc.Config{ClientID: clientID, Now: clk.Now})
	idt, err := v.Verify(ctx, tok.IDToken)
	if err != nil {
		return Identity{}, fmt.Errorf("checking the ID token: %w", err)
	}
	var id Identity
	if err := idt.Claims(&id); err != nil {
		return Identity{}, fmt.Errorf("reading the ID token: %w", err)
	}
	id.Subject = idt.Subject
	return id, nil
}
