package cmdutil

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
)

// CredentialFlag is --allow-insecure-http on a command that sends the
// stored credential to an MCP server (ping, proxy).
type CredentialFlag struct{ AllowInsecure bool }

// Bind adds the flag.
func (c *CredentialFlag) Bind(fl *pflag.FlagSet) {
	fl.BoolVar(&c.AllowInsecure, "allow-insecure-http", false, "UNSAFE: send the credential over plain http to a host that is not loopback")
}

// Origin is the origin the credential for the MCP server at mcpURL may go
// to: that server's own (flows.Confine keeps it there). Plain http is
// refused off loopback unless the flag was given, whatever the command or
// transport: the token would cross the network in clear.
func (c CredentialFlag) Origin(mcpURL string) (flows.Origin, error) {
	o, err := flows.OriginOf(mcpURL)
	if err != nil {
		return flows.Origin{}, clierr.FlagErrorf("MCP server URL: %v", err)
	}
	if !o.Secure() && !c.AllowInsecure {
		return flows.Origin{}, clierr.WithExit(clierr.ExitUsage, fmt.Errorf("refusing to send the credential for %s over plain http to a host that is not loopback: %w; pass --allow-insecure-http to send it anyway (unsafe)", o, flows.ErrInsecureEndpoint))
	}
	return o, nil
}

// MCPEndpoint is the MCP endpoint of the server cred is stored for (arg,
// as the user named it, for a credential from the environment): a bare
// origin gets /mcp, where MCP servers serve.
func MCPEndpoint(cred creds.Credential, arg string) string {
	mcpURL := cmp.Or(cred.Server, creds.ServerKey(arg))
	if u, err := url.Parse(mcpURL); err == nil && (u.Path == "" || u.Path == "/") {
		mcpURL = strings.TrimSuffix(mcpURL, "/") + "/mcp"
	}
	return mcpURL
}
