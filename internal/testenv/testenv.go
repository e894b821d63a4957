// Package testenv is a test helper, for tests that need a real component
// the machine may lack: headless Chromium, a Secret Service (gnome-keyring
// over D-Bus), PostgreSQL, Node.js with pinned npm packages, or root (to
// give a file to another user).
// Without it such a test skips, except under CI=true, where it fails, so
// tests against real parts never silently vanish from CI.
//
// go test hides everything a passing package prints (without -v), skip
// reasons included, so a developer would not notice that the browser tests
// never ran. Each package with such tests therefore runs them through Main,
// which prints one line per package at exit: what was skipped and the
// command that enables it.
//
// Only test code imports this package.
package testenv

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Part is a real component some tests need.
type Part int

const (
	Chromium Part = iota + 1
	SecretService
	PostgreSQL
	Root // to give files to another user (GiveAway)
	Node // Node.js 20 or newer with a test's pinned npm packages
)

func (p Part) String() string {
	switch p {
	case Chromium:
		return "Chromium"
	case SecretService:
		return "Secret Service"
	case PostgreSQL:
		return "PostgreSQL"
	case Root:
		return "root"
	case Node:
		return "Node.js"
	}
	return fmt.Sprintf("Part(%d)", int(p))
}

// Enable says how to give go test the part, with the project's scripts.
func (p Part) Enable() string {
	switch p {
	case Chromium:
		return "set MCPAUTH_CHROMIUM=$(scripts/install-chromium.sh)"
	case SecretService:
		return "run go test under scripts/with-keyring.sh"
	case PostgreSQL:
		return "run go test under scripts/with-postgres.sh"
	case Root:
		return "run go test as root, as CI does"
	case Node:
		return "install Node.js 20 or newer with npm, then npm ci --prefix testdata/mcp-ts-server and --prefix testdata/mcp-conformance"
	}
	return "no known way"
}

// CI reports whether the tests run in CI, where a missing part is a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// Nobody is the uid GiveAway gives files to: a user other than root and
// other than the one running the tests.
const Nobody = 65534

// GiveAway makes path (not a link's target) belong to Nobody, for tests of
// files another user planted. That takes root: without it, Missing.
func GiveAway(tb testing.TB, path string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		Missing(tb, Root, "giving a file to uid 65534 (nobody) takes root")
	}
	if err := os.Lchown(path, Nobody, Nobody); err != nil {
		tb.Fatalf("giving %s to uid %d: %v", path, Nobody, err)
	}
}

// recorder collects the tests skipped for a missing part. It is the one
// piece of package state: a test binary is one process, testing.M offers no
// per-run value to hang it on, and the tests that skip (deep inside helpers
// such as browsertest.Require) have no way to reach their TestMain.
type recorder struct {
	mu      sync.Mutex
	running bool              // Main is running the tests
	skipped map[Part][]string // test names, per part
}

var rec recorder

// Missing ends tb because part is not available (why says what is missing):
// a failure under CI=true, else a skip that Main reports at exit. It must be
// called from the test's goroutine, like tb.Skip.
func Missing(tb testing.TB, part Part, why string) {
	tb.Helper()
	if CI() {
		tb.Fatalf("%s required with CI=true: %s (%s)", part, why, part.Enable())
	}
	rec.mu.Lock()
	running := rec.running
	if running {
		if rec.skipped == nil {
			rec.skipped = make(map[Part][]string)
		}
		rec.skipped[part] = append(rec.skipped[part], tb.Name())
	}
	rec.mu.Unlock()
	if !running {
		// Without Main the skip would be invisible again; say how to wire it.
		tb.Fatalf("%s missing (%s), but this package's TestMain does not run testenv.Main: "+
			"add func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }", part, why)
	}
	tb.Skipf("no %s: %s (%s)", part, why, part.Enable())
}

// Main runs the package's tests with m and returns the exit code for
// os.Exit. When tests were skipped for a missing part it prints one line,
// e.g. "github.com/mcpauth/mcpauth/server: skipped 12 Chromium tests (set
// MCPAUTH_CHROMIUM=$(scripts/install-chromium.sh))": with -v into the test
// output; otherwise to the terminal (/dev/tty), since go test would discard
// a passing package's output, and to the test output when there is no
// terminal (then visible with -v or when the package fails).
func Main(m *testing.M) int {
	pkg := callerPackage()
	rec.mu.Lock()
	rec.running = true
	rec.mu.Unlock()
	code := m.Run()
	rec.mu.Lock()
	line := Summary(pkg, rec.skipped)
	rec.running = false
	rec.mu.Unlock()
	if line != "" {
		report(line)
	}
	return code
}

func report(line string) {
	var w io.Writer = os.Stdout
	if !testing.Verbose() {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer tty.Close()
			w = tty
		}
	}
	fmt.Fprintln(w, line)
}

// Summary is the line Main prints for pkg, or "" when nothing was skipped.
func Summary(pkg string, skipped map[Part][]string) string {
	parts := make([]Part, 0, len(skipped))
	for p, names := range skipped {
		if len(names) > 0 {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Sort(parts)
	items := make([]string, 0, len(parts))
	for _, p := range parts {
		n := len(skipped[p])
		noun := "tests"
		if n == 1 {
			noun = "test"
		}
		items = append(items, fmt.Sprintf("%d %s %s (%s)", n, p, noun, p.Enable()))
	}
	return pkg + ": skipped " + strings.Join(items, "; ")
}

// callerPackage is the import path of the package whose TestMain called
// Main, as go test prints it ("_test" of an external test package dropped).
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return "this package"
	}
	name := runtime.FuncForPC(pc).Name() // e.g. github.com/mcpauth/mcpauth/server_test.TestMain
	slash := strings.LastIndex(name, "/")
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return strings.TrimSuffix(name, "_test")
}
