package cmdutil

import (
	"fmt"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/flows"
)

// CredentialOrigin is the origin a command's credential for the MCP server
// at mcpURL may go to: that server's own (flows.Confine keeps it there).
// Plain http is refused off loopback unless allowInsecure, whatever the
// command or transport: the token would cross the network in clear.
func CredentialOrigin(mcpURL string, allowInsecure bool) (flows.Origin, error) {
	o, err := flows.OriginOf(mcpURL)
	if err != nil {
		return flows.Origin{}, clierr.FlagErrorf("MCP server URL: %v", err)
	}
	if !o.Secure() && !allowInsecure {
		return flows.Origin{}, clierr.WithExit(clierr.ExitUsage, fmt.Errorf("refusing to send the credential for %s over plain http to a host that is not loopback: %w; pass --allow-insecure-http to send it anyway (unsafe)", o, flows.ErrInsecureEndpoint))
	}
	return o, nil
}
