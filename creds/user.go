package creds

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/probe"
)

// userLookupTimeout bounds the best-effort question of who a token is for.
const userLookupTimeout = 5 * time.Second

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

// LookupUser says who a login's token belongs to, for display: the MCP
// server's own answer at GET /api/ping where it offers one (the name is an
// extension some servers add), else what a checked OpenID Connect ID token
// says (name, preferred_username or email; see probe.LoginIdentity), else
// the access token's own sub. Best effort: nothing fails the login. A
// DPoP-bound token (key non-nil) is presented with a proof.
func (k *Keeper) LookupUser(ctx context.Context, disc *flows.Discovery, clientID string, tok *flows.Token, key *flows.DPoP) User {
	u := k.pingUser(ctx, disc, tok.AccessToken, key)
	if u.Name != "" {
		return u
	}
	hc, err := k.HTTPClient()
	if err != nil {
		return u
	}
	ctx, cancel := context.WithTimeout(ctx, userLookupTimeout)
	defer cancel()
	id, err := probe.LoginIdentity(ctx, hc, k.Clock, disc, clientID, tok)
	if err != nil {
		if !errors.Is(err, probe.ErrNoIDToken) && k.Warn != nil {
			k.Warn("the ID token was not used to name you: %v", err)
		}
		return u
	}
	u.Name = id.Display()
	if u.ID == "" {
		u.ID = id.Subject
	}
	return u
}

// pingUser asks GET /api/ping who token belongs to, falling back to the
// token's own sub.
func (k *Keeper) pingUser(ctx context.Context, disc *flows.Discovery, token string, key *flows.DPoP) User {
	u := User{ID: Subject(token)}
	hc, err := k.HTTPClient()
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
	ctx, cancel := context.WithTimeout(ctx, userLookupTimeout)
	defer cancel()
	res, err := probe.Ping(ctx, hc, PingBase(disc.Resource, disc.Resource), token)
	if err != nil {
		return u
	}
	if res.UserID != "" {
		u.ID = res.UserID
	}
	u.Name = res.Name
	return u
}

// Subject is the sub claim of a JWT access token, for display only: the
// signature is not checked (the client cannot, and need not: the server
// does on every request). "" for opaque tokens.
func Subject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 8<<10 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return ""
	}
	return claims.Sub
}
