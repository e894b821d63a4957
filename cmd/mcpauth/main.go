// Command mcpauth logs in to OAuth-protected MCP servers, checks that they
// implement the contract, and runs a reference server.
package main

import (
	"os"

	"github.com/mcpauth/mcpauth/cmd/root"
)

// version is set by release builds: -ldflags "-X main.version=v1.2.3".
// Otherwise `mcpauth version` reports the module version go install
// recorded, or "dev".
var version string

func main() { os.Exit(root.Main(os.Args[1:], version)) }
