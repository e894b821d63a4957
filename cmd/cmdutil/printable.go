package cmdutil

import "github.com/mcpauth/mcpauth/internal/redact"

// Printable makes server-supplied text safe to write to a terminal
// (redact.Printable): what every command shows of a server's words.
func Printable(s string) string { return redact.Printable(s) }
