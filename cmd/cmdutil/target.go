package cmdutil

import (
	"net"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/reach"
)

// TargetArgs accepts exactly one <mcp-url> and names it when it is missing,
// instead of cobra's "accepts 1 arg(s), received 0".
func TargetArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return clierr.FlagErrorf("missing <mcp-url>, the MCP server's URL: %s <mcp-url>, e.g. %s http://127.0.0.1:8080/mcp", cmd.CommandPath(), cmd.CommandPath())
	case len(args) > 1:
		return clierr.FlagErrorf("%s takes one <mcp-url>, got %d arguments", cmd.CommandPath(), len(args))
	}
	return nil
}

// ParseTarget checks that arg is an http(s) URL. Anything else is a usage
// error (exit 2) with the URL the user probably meant: http:// for loopback
// hosts, https:// otherwise.
func ParseTarget(arg string) (string, error) {
	u, err := url.Parse(arg)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return arg, nil
	}
	if err == nil && u.Scheme != "" && u.Opaque == "" && u.Host != "" {
		return "", clierr.FlagErrorf("%q is not an http(s) URL: MCP servers are reached over http or https", arg)
	}
	guess := strings.TrimPrefix(arg, "//")
	host := guess
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || strings.ContainsAny(guess, " \t") {
		return "", clierr.FlagErrorf("%q is not a URL: give the MCP server's URL, e.g. http://127.0.0.1:8080/mcp", arg)
	}
	scheme := "https://"
	if reach.IsLoopback(host) {
		scheme = "http://"
	}
	return "", clierr.FlagErrorf("%q is not a URL; did you mean %s%s?", arg, scheme, guess)
}
