package cmdutil

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

// Tables get COLUMNS when set, 80 on a terminal that said nothing, and no
// limit on a pipe.
func TestTerminalWidth(t *testing.T) {
	env := map[string]string{"COLUMNS": "132"}
	if got := Columns(func(k string) string { return env[k] }); got != 132 {
		t.Fatalf("COLUMNS=132: %d", got)
	}
	for _, bad := range []string{"", "wide", "-3", "0"} {
		env["COLUMNS"] = bad
		if got := Columns(func(k string) string { return env[k] }); got != 0 {
			t.Errorf("COLUMNS=%q: %d, want 0", bad, got)
		}
	}
	for _, tt := range []struct {
		s    IOStreams
		want int
	}{
		{IOStreams{Width: 100}, 100},
		{IOStreams{Width: 100, StdoutTTY: true}, 100},
		{IOStreams{StdoutTTY: true}, 80},
		{IOStreams{}, 0},
	} {
		if got := tt.s.TerminalWidth(); got != tt.want {
			t.Errorf("%+v: %d, want %d", tt.s, got, tt.want)
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
