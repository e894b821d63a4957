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

// FlowError attaches the documented exit code to an error from flows.
func FlowError(doing string, err error) error {
	return FlowErrorRetry(doing, "", err)
}

// FlowErrorRetry is FlowError for a flow the user may simply run again
// (retry is that command): a denied or expired attempt says so.
func FlowErrorRetry(doing, retry string, err error) error {
	if err == nil {
		return nil
	}
	code := CodeFor(err)
	again := ""
	if retry != "" {
		again = "; run: " + retry + " to try again"
	}
	switch {
	case errors.Is(err, flows.ErrAccessDenied):
		return WithExit(code, fmt.Errorf("%s: access was denied%s", doing, again))
	case errors.Is(err, flows.ErrExpiredToken), errors.Is(err, flows.ErrDeviceCodeExpired):
		if again == "" {
			again = "; start again"
		}
		return WithExit(code, fmt.Errorf("%s: the code expired before it was approved%s", doing, again))
	}
	return WithExit(code, withNextStep(fmt.Errorf("%s: %w", doing, err), false))
}

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
