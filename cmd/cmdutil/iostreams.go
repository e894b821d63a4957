// Package cmdutil is the wiring every command shares: IO streams, the
// Factory of lazily built dependencies (storage, HTTP client, clock, the
// creds.Keeper), flag helpers and output helpers. What a credential is and
// how it is loaded, refreshed or renewed belongs to package creds; exit
// codes and the wording of failures to cmd/internal/clierr.
package cmdutil

import "github.com/mcpauth/mcpauth/internal/iostreams"

// IOStreams are a command's standard streams (package iostreams).
type IOStreams = iostreams.IOStreams
