package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1: a package's init, with what
// it allocated.
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// Every run of every command runs every linked package's init, so this
// module's packages must do no real work there: a package-level
// regexp.MustCompile or template.Must allocates several KiB and is built
// on first use instead (sync.OnceValue). What they allocate now is a few
// small strings and maps, well under the limit.
func TestOwnPackagesDoNoWorkAtStart(t *testing.T) {
	const limit = 2048 // bytes per package
	cmd := exec.Command(buildBinary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpauth version: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], "github.com/mcpauth/mcpauth/") {
			continue
		}
		seen++
		if n, _ := strconv.Atoi(m[2]); n > limit {
			t.Errorf("%s allocates %d bytes (%s allocs) at init, over %d: build it on first use", m[1], n, m[3], limit)
		}
	}
	if seen == 0 {
		t.Fatalf("no init trace of this module's packages in:\n%s", out)
	}
}
