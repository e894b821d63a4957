// Package clierr is what the CLI says when something fails: the exit codes
// scripts branch on, the one mapping from errors to them (CodeFor), and
// the wording of a failure with its next step (a flag to pass, a command
// to run). Commands wrap errors here; cmd/root prints them and exits.
package clierr

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
)

// Exit codes are part of the CLI's interface: scripts branch on them, so
// they never change meaning. README.md documents them.
const (
	ExitOK           = 0
	ExitFailure      = 1 // anything not listed below
	ExitUsage        = 2 // bad flags or arguments
	ExitAuthRequired = 3 // no usable credential: run `mcpauth login`
	ExitDenied       = 4 // the user or server denied access
	ExitExpired      = 5 // a code or the login timed out before approval
	ExitNetwork      = 6 // server unreachable or its answers unusable
	ExitStorage      = 7 // token storage unavailable or refused
	ExitCheckFailed  = 8 // conformance: at least one check failed
	ExitCancelled    = 130
)

// ExitError carries an exit code with the error that caused it.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WithExit attaches an exit code to err.
func WithExit(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// FlagErrorf reports a usage error (exit 2).
func FlagErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ErrSilent ends a command with exit 1 after it has already said why.
var ErrSilent = errors.New("silent error")

// SilentExit ends a command with code after it has already said why.
func SilentExit(code int) error { return &ExitError{Code: code, Err: ErrSilent} }

// NextStep is the fix for an error that has one, worded once for every
// command, or "". overrides says the command has the unsafe discovery
// flags (DiscoverFlags.Bind), so the message may name them.
func NextStep(err error, overrides bool) string {
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, flows.ErrS256Unsupported) && overrides:
		return "pass --allow-missing-s256 to continue anyway (unsafe: the login can be intercepted)"
	case errors.Is(err, flows.ErrInsecureEndpoint) && overrides:
		return "pass --allow-insecure-http to accept plain http (unsafe)"
	case errors.As(err, &certErr), strings.Contains(err.Error(), "x509:"):
		return "if the server's certificate comes from a private CA, pass --ca-file with that CA's PEM file"
	case errors.Is(err, flows.ErrTimeout):
		return "pass a longer --timeout (e.g. --timeout 10m) to wait longer"
	case errors.Is(err, flows.ErrNoClient):
		return "if the server registers clients without advertising it, pass --registration-endpoint URL; otherwise pass --client-id with a client registered at the server"
	}
	return ""
}

// withNextStep appends err's NextStep, if any.
func withNextStep(err error, overrides bool) error {
	if step := NextStep(err, overrides); step != "" {
		return fmt.Errorf("%w; %s", err, step)
	}
	return err
}
