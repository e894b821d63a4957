// Package probe checks what a login got, for the CLI and the conformance
// suite: a credential against a server's /api/ping (Ping) or an MCP
// endpoint (CheckMCP), and who an ID token names (LoginIdentity). A
// library caller checks a token by using it.
package probe
