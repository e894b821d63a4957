package bench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// TestMain serves the bare baseline when run with BaselineArg (the tests'
// Options.Baseline is this binary, as it is tools/bench in use), and
// otherwise reports PostgreSQL tests skipped for lack of the real component
// in one line (go test hides skip reasons of passing packages).
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == BaselineArg {
		os.Exit(serveBaselineChild())
	}
	os.Exit(testenv.Main(m))
}

func serveBaselineChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := ServeBaseline(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
