package cmdutil

import (
	"net/http"
)

// Factory carries the dependencies commands need, built lazily so a command
// that does not touch the network or the keyring never pays for them.
// Tests replace any field.
type Factory struct {
	IO      *IOStreams
	Getenv  func(string) string
	Version string

	// HTTPClient returns the client for talking to servers (global flags
	// such as --ca-file and --debug shape it).
	HTTPClient func() (*http.Client, error)
}
