package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/mcpauth/mcpauth/tools/bench/internal/bench"
)

// mcpauthPkg is built when --mcpauth names no binary: the module's own
// command, as `go run ./cmd/mcpauth` built it when bench was a subcommand.
const mcpauthPkg = "github.com/mcpauth/mcpauth/cmd/mcpauth"

// needsMcpauth: the mcpauth binary runs as `serve` in out-of-process mode
// against the local reference server, and for the device flows at scale
// and pending.
// A remote target's out-of-process run has only the baseline as a child.
func needsMcpauth(o bench.Options) bool {
	outOfProcess := len(o.Modes) == 0 || slices.Contains(o.Modes, bench.OutOfProcess)
	return (outOfProcess && o.Target == "") || len(o.DeviceFlows) > 0 || len(o.ScalePending) > 0
}

// mcpauthBinary is the absolute path of the binary given, or of one built
// from this module into a temp dir that cleanup removes.
func mcpauthBinary(ctx context.Context, given string, progress func(string, ...any)) (exe string, cleanup func(), err error) {
	if given != "" {
		if filepath.Base(given) == given { // a bare name, looked up as a shell would
			if given, err = exec.LookPath(given); err != nil {
				return "", nil, fmt.Errorf("--mcpauth: %w", err)
			}
		}
		if exe, err = filepath.Abs(given); err != nil {
			return "", nil, fmt.Errorf("--mcpauth: %w", err)
		}
		if _, err := os.Stat(exe); err != nil {
			return "", nil, fmt.Errorf("--mcpauth: %w", err)
		}
		return exe, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "mcpauth-bench-bin-")
	if err != nil {
		return "", nil, fmt.Errorf("making a dir for the mcpauth binary: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	exe = filepath.Join(dir, "mcpauth")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	progress("building %s (give --mcpauth to measure another binary)", mcpauthPkg)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", exe, mcpauthPkg).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building mcpauth (run from the module, or give --mcpauth): %w\n%s", err, out)
	}
	return exe, cleanup, nil
}
