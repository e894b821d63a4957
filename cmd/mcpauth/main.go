// Command mcpauth logs in to OAuth-protected MCP servers, checks that they
// implement the contract, and runs a reference server.
package main

import (
	"os"

	"github.com/mcpauth/mcpauth/cmd/root"
)

func main() { os.Exit(root.Main(os.Args[1:])) }
