package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/flows"
)

// maxMoves bounds the logins one proxy run makes, without the user asking,
// to follow the resource to another authorization server (SEP-2352). A
// server whose metadata keeps changing would otherwise open the browser
// for every request; after one, the user decides (mcpauth login).
const maxMoves = 1

// movedTo returns the authorization server the resource's metadata names
// now when it is not the one that issued the credential, else "".
func (c *credSource) movedTo(ctx context.Context) string {
	issuer := c.Current().Issuer
	if issuer == "" {
		return ""
	}
	disc, err := c.f.Discover(ctx, c.Server, cmdutil.DiscoverFlags{})
	if err != nil || disc.Issuer == issuer {
		return ""
	}
	return disc.Issuer
}

// errMovedAgain: the bound on logins that follow a move was reached.
var errMovedAgain = errors.New("moved again")

// followMove logs in again at the authorization server the resource moved
// to, at most maxMoves times; a refresh at the old one cannot help. The
// login discovers and registers anew there; nothing the old one issued is
// sent to it. Past the bound, a login the user ran meanwhile is taken,
// else the error names the command to run.
func (c *credSource) followMove(ctx context.Context, rejected flows.Credential, to string) (flows.Credential, bool, error) {
	from := c.Current().Issuer
	n, ok, err := c.Replace(ctx, rejected, func(ctx context.Context) error {
		c.mu.Lock()
		if c.moves >= maxMoves {
			c.mu.Unlock()
			return errMovedAgain
		}
		c.moves++
		c.mu.Unlock()
		c.Log("the authorization server of %s moved from %s to %s: logging in there", c.Server, from, to)
		return c.logIn(ctx, "", "")
	})
	if !errors.Is(err, errMovedAgain) {
		return n, ok, err
	}
	if n, ok, err := c.Replace(ctx, rejected, nil); err == nil && ok {
		c.setMovedAgain("")
		return n, true, nil
	}
	c.setMovedAgain(to)
	return rejected, false, fmt.Errorf("the authorization server of %s changed again (from %s to %s) after the proxy logged in once for a move; not logging in again without you: run: mcpauth login %s",
		c.Server, from, to, c.Server)
}

func (c *credSource) setMovedAgain(to string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.movedAgain = to
}

// keepsMoving returns where the resource moved after the proxy stopped
// following it, or "".
func (c *credSource) keepsMoving() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.movedAgain
}
