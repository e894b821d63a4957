// Package clierr is what the CLI says when something fails: the exit codes
// scripts branch on, the one mapping from errors to them (CodeFor), and
// the wording of a failure with its next step (a flag to pass, a command
// to run). Commands wrap errors here; cmd/root prints them and exits.
package clierr

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/secretflag"
	"github.com/mcpauth/mcpauth/keyring"
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

// CodeFor is the documented exit code for an error that carries none: the
// flows sentinels, network failures and keyring failures; else ExitFailure.
func CodeFor(err error) int {
	var ee *ExitError
	var netErr net.Error
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, secretflag.ErrUsage):
		return ExitUsage
	case errors.Is(err, creds.ErrAuthRequired):
		return ExitAuthRequired
	case errors.Is(err, creds.ErrStorage):
		return ExitStorage
	case errors.Is(err, creds.ErrInput), errors.As(err, new(*creds.AmbiguousError)):
		return ExitUsage
	case errors.Is(err, creds.ErrRefresh):
		return ExitNetwork
	case errors.Is(err, flows.ErrCrossOrigin):
		return ExitNetwork // the server's answer was not its own
	case errors.Is(err, context.Canceled):
		return ExitCancelled
	case errors.Is(err, flows.ErrAccessDenied), errors.Is(err, flows.ErrInsufficientScope):
		return ExitDenied
	case errors.Is(err, flows.ErrExpiredToken), errors.Is(err, flows.ErrDeviceCodeExpired), errors.Is(err, flows.ErrTimeout):
		return ExitExpired
	case errors.Is(err, flows.ErrUnauthorized):
		return ExitAuthRequired
	case errors.Is(err, keyring.ErrKeyringUnavailable), errors.Is(err, keyring.ErrLocked):
		return ExitStorage
	case errors.As(err, &netErr):
		return ExitNetwork
	}
	return ExitFailure
}
