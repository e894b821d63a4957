package proxy

import (
	"context"
	"fmt"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
)

// maxMoves bounds the logins one proxy run makes, without the user asking,
// to follow the resource to another authorization server (SEP-2352). A
// server whose metadata keeps changing would otherwise open the browser
// for every request; after one, the user decides (mcpauth login).
const maxMoves = 1

// movedTo returns the authorization server the resource's metadata names
// now when it is not the one that issued the credential, else "".
func (c *credSource) movedTo(ctx context.Context) string {
	if c.cred.Issuer == "" {
		return ""
	}
	disc, err := c.f.Discover(ctx, c.server, cmdutil.DiscoverFlags{})
	if err != nil || disc.Issuer == c.cred.Issuer {
		return ""
	}
	return disc.Issuer
}

// followMove logs in again at the authorization server the resource moved
// to, at most maxMoves times; a refresh at the old one cannot help. The
// login discovers and registers anew there; nothing the old one issued is
// sent to it. Past the bound, a login the user ran meanwhile is taken,
// else the error names the command to run. c.mu is held.
func (c *credSource) followMove(ctx context.Context, token, to string) (bool, error) {
	if c.moves < maxMoves {
		c.moves++
		c.log("the authorization server of %s moved from %s to %s: logging in there", c.server, c.cred.Issuer, to)
		return c.logInAgain(ctx, token, "", "")
	}
	if n, err := c.f.Keeper().Fresh(ctx, c.server); err == nil && n.Token != token {
		c.cred, c.loaded, c.movedAgain = n, c.f.Clock.Now(), ""
		return true, nil
	}
	c.movedAgain = to
	return false, fmt.Errorf("the authorization server of %s changed again (from %s to %s) after the proxy logged in once for a move; not logging in again without you: run: mcpauth login %s",
		c.server, c.cred.Issuer, to, c.server)
}

// keepsMoving returns where the resource moved after the proxy stopped
// following it, or "".
func (c *credSource) keepsMoving() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.movedAgain
}
