package creds

import (
	"fmt"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Fill puts a token response (and the DPoP key it is bound to, nil for
// Bearer) into b: the one mapping from a token response to what is stored,
// for logins, renewals and refreshes. A response without scope keeps the
// scope b had (RFC 6749 §5.1: the same as before), and a refresh token's
// expiry changes with the refresh token or when the server says.
func (b *Bundle) Fill(tok *flows.Token, d *flows.DPoP) error {
	b.Kind = KindOAuth
	if !tok.RefreshExpiry.IsZero() || tok.RefreshToken != b.RefreshToken {
		b.RefreshExpiry = tok.RefreshExpiry
	}
	b.AccessToken, b.TokenType, b.RefreshToken, b.Expiry = tok.AccessToken, tok.TokenType, tok.RefreshToken, tok.Expiry
	b.Lifetime = max(tok.ExpiresIn, 0)
	if tok.Scope != "" {
		b.Scope = tok.Scope
	}
	b.DPoPKey = ""
	if d != nil {
		k, err := d.MarshalKey()
		if err != nil {
			return fmt.Errorf("creds: the DPoP key: %w", err)
		}
		b.DPoPKey = k
	}
	return nil
}

// Login is the bundle a user login (browser or device) stores: where the
// token came from, the client it was issued to, the user, and the token.
func Login(disc *flows.Discovery, client flows.Client, tok *flows.Token, d *flows.DPoP, user User) (Bundle, error) {
	b := Bundle{
		UserID: user.ID, UserName: user.Name, Issuer: disc.Issuer, Resource: disc.Resource,
		TokenEndpoint: disc.AuthServer.TokenEndpoint, RevocationEndpoint: disc.AuthServer.RevocationEndpoint,
		Client: &ClientInfo{ClientID: client.ID, ClientSecret: client.Secret, TokenEndpointAuthMethod: client.AuthMethod, RedirectURIs: client.RedirectURIs},
	}
	err := b.Fill(tok, d)
	return b, err
}

// flowsClient is the client a stored registration authenticates as. A
// registration that named no method uses client_secret_basic with a
// secret (RFC 7591 §2's default) and none without one.
func (c *ClientInfo) flowsClient() flows.Client {
	if c == nil {
		return flows.Client{AuthMethod: flows.AuthMethodNone}
	}
	m := c.TokenEndpointAuthMethod
	switch {
	case m != "":
	case c.ClientSecret != "":
		m = flows.AuthMethodBasic
	default:
		m = flows.AuthMethodNone
	}
	return flows.Client{ID: c.ClientID, Secret: c.ClientSecret, AuthMethod: m}
}

// SaveLogin stores what a user login got under the login's StoreKey.
func SaveLogin(st Store, account string, disc *flows.Discovery, client flows.Client, tok *flows.Token, d *flows.DPoP, user User) error {
	b, err := Login(disc, client, tok, d, user)
	if err != nil {
		return err
	}
	return save(st, Entry{EntryInfo: keyring.EntryInfo{Server: StoreKey(disc), Account: account}}, b, "token")
}
