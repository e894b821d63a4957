// Command bench measures what authentication costs per request on the
// reference server, as a ratio to a bare handler, and regenerates
// BENCHMARKS.md and BENCHMARKS.svg. It is a development tool: it lives
// under tools/ so that no user's mcpauth binary links the load generator,
// nor the server and conformance suite it drives in process. Run it from
// the module, which it builds ./cmd/mcpauth of unless --mcpauth names a
// built binary:
//
//	go run ./tools/bench --markdown BENCHMARKS.md --chart BENCHMARKS.svg
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpauth/mcpauth/internal/secretflag"
)

func main() {
	// SIGTERM too: it is how a parent bench stops this binary when it runs
	// as the baseline child.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCmd(os.Stdin, os.Stdout, os.Stderr, os.Getenv).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(exitCode(err))
	}
}

// usageError is a bad flag or argument: exit 2, as mcpauth's own
// commands exit.
type usageError struct{ error }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode is 2 for usage errors (a bad secret flag's included), else 1.
func exitCode(err error) int {
	if errors.As(err, new(usageError)) || errors.Is(err, secretflag.ErrUsage) {
		return 2
	}
	return 1
}
