package clierr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

func TestCodeFor(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	for _, tt := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("x: %w", flows.ErrAccessDenied), ExitDenied},
		{fmt.Errorf("x: %w", flows.ErrExpiredToken), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrDeviceCodeExpired), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrTimeout), ExitExpired},
		{fmt.Errorf("x: %w", flows.ErrUnauthorized), ExitAuthRequired},
		{&url.Error{Op: "Get", URL: "http://x", Err: netErr}, ExitNetwork},
		{&keyring.UnavailableError{Op: "get", Cause: errors.New("no bus")}, ExitStorage},
		{fmt.Errorf("x: %w", keyring.ErrLocked), ExitStorage},
		{fmt.Errorf("x: %w", context.Canceled), ExitCancelled},
		{WithExit(ExitUsage, errors.New("u")), ExitUsage},
		{fmt.Errorf("x: %w", creds.ErrAuthRequired), ExitAuthRequired},
		{fmt.Errorf("x: %w", creds.ErrStorage), ExitStorage},
		{fmt.Errorf("x: %w", creds.ErrInput), ExitUsage},
		{fmt.Errorf("x: %w", creds.ErrRefresh), ExitNetwork},
		{&creds.AmbiguousError{Servers: []string{"a", "b"}}, ExitUsage},
		// A usage error inside a renewal keeps its code: the cause decides.
		{fmt.Errorf("renewing: %w", fmt.Errorf("%w: %w", WithExit(ExitUsage, errors.New("--ca-file")), creds.ErrAuthRequired)), ExitUsage},
		{errors.New("other"), ExitFailure},
	} {
		if got := CodeFor(tt.err); got != tt.want {
			t.Errorf("CodeFor(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// Failures say how to go on: a timeout names --timeout.
func TestNextStepsOnFailure(t *testing.T) {
	err := FlowError("logging in", fmt.Errorf("waiting: %w after 5m0s", flows.ErrTimeout))
	if CodeFor(err) != ExitExpired || !strings.Contains(err.Error(), "--timeout 10m") {
		t.Errorf("timeout: %v", err)
	}
}
