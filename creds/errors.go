package creds

import (
	"errors"
	"fmt"
)

// The kinds of failure a caller branches on (the CLI maps each to an exit
// code). Every error this package returns for them matches one with
// errors.Is and keeps its cause reachable with errors.As.
var (
	// ErrAuthRequired: there is no usable credential; a login is needed.
	ErrAuthRequired = errors.New("authentication required")
	// ErrStorage: the token storage failed or holds something unusable.
	ErrStorage = errors.New("token storage failed")
	// ErrInput: a local input (key file, assertion, ID token) is unusable.
	ErrInput = errors.New("unusable local input")
	// ErrRefresh: a refresh got no usable answer (the server was
	// unreachable or answered with something other than a refusal).
	ErrRefresh = errors.New("refresh failed")
)

// kindError is an error of one of the kinds above. The cause comes first
// in Unwrap, so an error the cause already classifies keeps that class.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

func kinded(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// hasKind reports whether err already carries one of the kinds above.
func hasKind(err error) bool {
	for _, k := range []error{ErrAuthRequired, ErrStorage, ErrInput, ErrRefresh} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
