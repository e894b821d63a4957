package creds

import (
	"cmp"
	"errors"
	"slices"
	"strings"

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

// PingBase is where /api/ping lives for a stored credential: the resource
// without its /mcp path, else the resource's origin. Never the issuer: the
// access token goes to the MCP server's origin only, and an answer from the
// authorization server says nothing about the MCP server.
func PingBase(resource, server string) string {
	res := cmp.Or(resource, server)
	if strings.HasSuffix(res, "/mcp") {
		return strings.TrimSuffix(res, "/mcp")
	}
	if o, err := flows.OriginOf(res); err == nil {
		return o.String()
	}
	return res
}

// AmbiguousError is a command given no server while several are stored
// for the account: the caller asks the user to name one.
type AmbiguousError struct{ Servers []string }

func (e *AmbiguousError) Error() string {
	return "logged in to several servers; name one of:\n  " + strings.Join(e.Servers, "\n  ")
}

// Resolve picks the stored entry a command is about: the one for arg (an
// MCP URL or its base URL), or the only one stored for account when arg is
// "". Nothing stored is ErrAuthRequired; several and no arg is an
// *AmbiguousError.
func Resolve(st Store, arg, account string) (Entry, error) {
	entries, err := List(st)
	if err != nil {
		return Entry{}, kinded(ErrStorage, "listing stored credentials: %w", err)
	}
	var mine []Entry
	for _, e := range entries {
		if e.Account == account || account == "" && e.Account == keyring.DefaultAccount {
			mine = append(mine, e)
		}
	}
	if arg == "" {
		switch len(mine) {
		case 0:
			return Entry{}, loginNeeded("", "not logged in to any server")
		case 1:
			return mine[0], nil
		}
		var names []string
		for _, e := range mine {
			names = append(names, e.Server)
		}
		slices.Sort(names)
		return Entry{}, &AmbiguousError{Servers: names}
	}
	want := []string{ServerKey(arg), ServerKey(strings.TrimSuffix(arg, "/") + "/mcp")}
	for _, e := range mine {
		if slices.Contains(want, e.Server) {
			return e, nil
		}
	}
	return Entry{}, loginNeeded(arg, "no stored credential for %s", arg)
}

// loadEntry loads e's bundle, with the kind of error a caller needs.
func loadEntry(st Store, e Entry) (Bundle, error) {
	b, err := Load(st, e.Server, e.Account)
	if errors.Is(err, keyring.ErrNotFound) {
		return b, loginNeeded(e.Server, "no stored credential for %s", e.Server)
	}
	if err != nil {
		return b, kinded(ErrStorage, "reading the stored credential: %w", err)
	}
	return b, nil
}

// save stores b for e, with a message that says what was being stored.
func save(st Store, e Entry, b Bundle, what string) error {
	if err := Save(st, e.Server, e.Account, b); err != nil {
		return kinded(ErrStorage, "storing the %s: %w", what, err)
	}
	return nil
}
