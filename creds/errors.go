package creds

import (
	"errors"
	"fmt"
)

// Failure is a kind of failure a caller branches on (the CLI maps each to an
// exit code). Every error this package returns for one matches it with
// errors.Is and keeps its cause reachable with errors.As. The kinds are
// constants, so no caller can reassign them.
type Failure string

func (f Failure) Error() string { return string(f) }

const (
	ErrAuthRequired Failure = "authentication required" // no usable credential: a login is needed
	ErrStorage      Failure = "token storage failed"    // storage failed or holds something unusable
	ErrInput        Failure = "unusable local input"    // a key file, assertion or ID token
	ErrRefresh      Failure = "refresh failed"          // no usable answer that was not a refusal
)

// kindError is an error of one of the kinds above. The cause comes first
// in Unwrap, so an error the cause already classifies keeps that class.
type kindError struct {
	kind Failure
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

func kinded(kind Failure, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// hasKind reports whether err already carries one of the kinds above.
func hasKind(err error) bool {
	for _, k := range []Failure{ErrAuthRequired, ErrStorage, ErrInput, ErrRefresh} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// LoginError is a failure only a new login fixes: nothing is stored for
// Server, or what is stored can no longer be renewed. Its message says
// what happened; the program that logs in names the way to do it (the
// CLI appends its `mcpauth login` command). It wraps an error of one of
// the kinds above, usually ErrAuthRequired.
type LoginError struct {
	// Server is what to log in to: the MCP URL or storage key the caller
	// asked about; "" when nothing at all is stored for the account.
	Server string
	// Machine: the credential came from a machine login (a client
	// credentials, JWT bearer or enterprise grant), to be run again with
	// the same options.
	Machine bool
	Err     error
}

func (e *LoginError) Error() string { return e.Err.Error() }
func (e *LoginError) Unwrap() error { return e.Err }

// loginNeeded is an ErrAuthRequired *LoginError about server.
func loginNeeded(server, format string, args ...any) error {
	return &LoginError{Server: server, Err: kinded(ErrAuthRequired, format, args...)}
}
