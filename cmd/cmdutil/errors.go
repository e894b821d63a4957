package cmdutil

import (
	"errors"
	"fmt"
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
