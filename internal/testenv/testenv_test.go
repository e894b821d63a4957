package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv makes the test binary a child that exercises Missing for real:
// "skip" runs TestChild under Main, "nomain" runs it without Main.
const childEnv = "MCPAUTH_TESTENV_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "nomain" {
		os.Exit(m.Run())
	}
	os.Exit(Main(m))
}

func TestChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestMissing in a child process")
	}
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) { Missing(t, PostgreSQL, "MCPAUTH_TEST_POSTGRES_URL is unset") })
	}
	Missing(t, Chromium, "chromium not found")
	t.Log("Missing returned")
}

// TestMissing runs TestChild in a child test binary, so the real testing
// package decides skip or fail and Main prints its summary.
func TestMissing(t *testing.T) {
	const summary = "github.com/mcpauth/mcpauth/internal/testenv: skipped 1 Chromium test " +
		"(set MCPAUTH_CHROMIUM=$(scripts/install-chromium.sh)); 2 PostgreSQL tests (run go test under scripts/with-postgres.sh)"
	for _, tc := range []struct {
		name, mode, ci string
		fail           bool
		want           []string
	}{
		{"skip outside CI", "skip", "", false, []string{"--- SKIP: TestChild/a", "--- SKIP: TestChild (", summary}},
		{"CI=false is not CI", "skip", "false", false, []string{"--- SKIP: TestChild (", summary}},
		{"fail under CI", "skip", "true", true, []string{"--- FAIL: TestChild/a", "PostgreSQL required with CI=true"}},
		{"fail without Main", "nomain", "", true, []string{"--- FAIL: TestChild/a", "does not run testenv.Main"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"="+tc.mode, "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fail {
				t.Errorf("child error = %v, want failure %v", err, tc.fail)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("child output lacks %q", w)
				}
			}
			if strings.Contains(string(out), "Missing returned") {
				t.Error("the test went on after Missing")
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	if got := Summary("p", nil); got != "" {
		t.Errorf("Summary with no skips = %q, want empty", got)
	}
	got := Summary("example.com/p", map[Part][]string{SecretService: {"TestA"}, Chromium: {"TestB", "TestC"}, Node: {"TestD"}})
	want := "example.com/p: skipped 2 Chromium tests (set MCPAUTH_CHROMIUM=$(scripts/install-chromium.sh)); " +
		"1 Secret Service test (run go test under scripts/with-keyring.sh); " +
		"1 Node.js test (install Node.js 20 or newer with npm, then npm ci --prefix testdata/mcp-ts-server and --prefix testdata/mcp-conformance)"
	if got != want {
		t.Errorf("Summary = %q\nwant      %q", got, want)
	}
}

func TestCallerPackage(t *testing.T) {
	// Main's caller is TestMain; here the test function stands in for it.
	got := func() string { return callerPackage() }()
	if got != "github.com/mcpauth/mcpauth/internal/testenv" {
		t.Errorf("callerPackage() = %q", got)
	}
}

// TestNotInBinary keeps this package (and the testing package it brings)
// out of the mcpauth binary.
func TestNotInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/mcpauth/mcpauth/cmd/mcpauth").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mcpauth/mcpauth/internal/testenv" {
			t.Fatal("cmd/mcpauth depends on internal/testenv: only test code may import it")
		}
	}
}
