package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// The MCP project's own conformance suite (npm @modelcontextprotocol/
// conformance, pinned in testdata/mcp-conformance) runs its auth client
// scenarios against the mcpauth CLI: for each one it starts its scenario
// servers on loopback and runs testdata/mcp-conformance/client with the MCP
// URL, which logs in with `mcpauth login` (a browser stand-in, or the
// scenario's machine credentials) and then, as a desktop host, sends
// initialize, tools/list and tools/call through `mcpauth proxy --login`.
// The suite judges what reached its servers.
//
// Every auth scenario the pinned suite lists is in exactly one of
// mcpConformancePassing and mcpConformanceKnownFailures. A passing scenario
// must pass. A known failure must still fail with exactly the checks
// listed, so that a fix (or a new failure) shows up here and the tables
// are moved along with it.

// A scenario name, optionally with "@<spec version>" to run it at that
// protocol revision instead of the suite's default for it.
var mcpConformancePassing = []string{
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch",
	"auth/offline-access-scope",
	"auth/offline-access-not-supported",
	"auth/iss-supported",
	"auth/iss-not-advertised",
	"auth/iss-supported-missing",
	"auth/iss-wrong-issuer",
	"auth/iss-unexpected",
	"auth/iss-normalized",
	"auth/metadata-issuer-mismatch",
	// After the login, as a host uses it through mcpauth proxy --login.
	"auth/scope-step-up",
	"auth/scope-step-up@2026-07-28",
	"auth/scope-retry-limit",
	"auth/authorization-server-migration",
	// Extensions.
	"auth/dpop",
	"auth/dpop-nonce",
	"auth/client-credentials-basic",
	"auth/client-credentials-jwt",
	"auth/enterprise-managed-authorization",
	"auth/wif-jwt-bearer",
}

// knownFailure is a scenario that fails today because of a known client
// gap: the issue that fixes it, the checks that fail (the suite's check
// ids, plus "client-exited-with-error" when the client command failed),
// and why.
type knownFailure struct {
	issue  int
	checks []string
	why    string
}

// clientExited is the pseudo-check for a client command that exited non-zero.
const clientExited = "client-exited-with-error"

// mcpConformanceKnownFailures is empty: every scenario passes. A new pin
// whose new scenario fails goes here, with its issue, until fixed.
var mcpConformanceKnownFailures = map[string]knownFailure{}

// mcpConformanceTimeout is the suite's --timeout for the client command.
const mcpConformanceTimeout = 90 * time.Second

type mcpConformanceResult struct {
	scenario string
	pass     bool
	failing  []string // check ids (FAILURE or WARNING), and clientExited
	lines    []string // one line per failing check: id, status, message
	took     time.Duration
}

func TestMCPConformanceAuthScenarios(t *testing.T) {
	dir, version := tsserver.RequirePackage(t, "mcp-conformance", "@modelcontextprotocol/conformance", "MCP conformance suite")
	node, _ := exec.LookPath("node")
	bin := buildBinary(t)
	client := filepath.Join(t.TempDir(), "mcpconf-client")
	if out, err := exec.Command("go", "build", "-o", client, filepath.Join(dir, "client")).CombinedOutput(); err != nil {
		t.Fatalf("building testdata/mcp-conformance/client: %v\n%s", err, out)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPAUTH_") {
			env = append(env, kv)
		}
	}
	env = append(env, "MCPAUTH_BIN="+bin, "NO_COLOR=1", "FORCE_COLOR=0")

	checkScenarioTables(t, node, dir, env)

	all := slices.Clone(mcpConformancePassing)
	for s := range mcpConformanceKnownFailures {
		all = append(all, s)
	}
	sort.Strings(all)
	var mu sync.Mutex
	results := map[string]mcpConformanceResult{}
	start := time.Now()
	t.Run("scenario", func(t *testing.T) {
		for _, s := range all {
			t.Run(s, func(t *testing.T) {
				t.Parallel()
				r := runMCPConformance(t, node, dir, client, env, s)
				mu.Lock()
				results[s] = r
				mu.Unlock()
				judgeMCPConformance(t, r)
			})
		}
	})
	var sum strings.Builder
	passed := 0
	for _, s := range all {
		r, ok := results[s]
		if !ok {
			continue
		}
		verdict := "FAIL"
		if r.pass {
			verdict = "PASS"
			passed++
		}
		note := ""
		if kf, ok := mcpConformanceKnownFailures[s]; ok {
			note = fmt.Sprintf("  known failure, issue %d: %s", kf.issue, strings.Join(r.failing, ", "))
		}
		fmt.Fprintf(&sum, "  %s %-45s %5.1fs%s\n", verdict, s, r.took.Seconds(), note)
	}
	t.Logf("@modelcontextprotocol/conformance %s: %d of %d auth scenario runs pass, in %s:\n%s",
		version, passed, len(results), time.Since(start).Round(time.Second), sum.String())
}

// checkScenarioTables fails when the pinned suite lists an auth client
// scenario the tables do not name, or the tables name one it lacks, and
// when a scenario is in both.
func checkScenarioTables(t *testing.T, node, dir string, env []string) {
	t.Helper()
	cmd := exec.Command(node, "conformance.mjs", "list", "--client")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --client: %v\n%s", err, out)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*- (auth/\S+)`).FindAllStringSubmatch(string(out), -1) {
		listed[m[1]] = true
	}
	if len(listed) == 0 {
		t.Fatalf("conformance list --client names no auth/ scenario:\n%s", out)
	}
	named := map[string]bool{}
	for _, s := range mcpConformancePassing {
		if _, ok := mcpConformanceKnownFailures[s]; ok {
			t.Errorf("%s is both passing and a known failure", s)
		}
		named[s] = true
	}
	for s := range mcpConformanceKnownFailures {
		named[s] = true
	}
	base := map[string]bool{}
	for s := range named {
		name, _, _ := strings.Cut(s, "@")
		base[name] = true
		if !listed[name] {
			t.Errorf("%s is in the tables, but the pinned suite has no such client scenario", name)
		}
	}
	for s := range listed {
		if !base[s] {
			t.Errorf("the pinned suite has client scenario %s, which neither mcpConformancePassing nor mcpConformanceKnownFailures names: run it and add it", s)
		}
	}
}

// runMCPConformance runs one scenario (name[@spec-version]) with the
// client command and reads the suite's verdict and checks.
func runMCPConformance(t *testing.T, node, dir, client string, env []string, scenario string) mcpConformanceResult {
	t.Helper()
	name, specVersion, _ := strings.Cut(scenario, "@")
	out := t.TempDir()
	args := []string{"conformance.mjs", "client", "--command", client, "--scenario", name,
		"--timeout", fmt.Sprint(mcpConformanceTimeout.Milliseconds()), "-o", out}
	if specVersion != "" {
		args = append(args, "--spec-version", specVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpConformanceTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	r := mcpConformanceResult{scenario: scenario, pass: err == nil, took: time.Since(began)}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running the suite: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the suite did not end within %s\n%s", mcpConformanceTimeout+30*time.Second, stderr.String())
	}
	var checksFile string
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			checksFile = p
		}
		return nil
	})
	if checksFile == "" {
		t.Fatalf("the suite wrote no checks.json (exit %v)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	b, rerr := os.ReadFile(checksFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var checks []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Description  string `json:"description"`
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", checksFile, err)
	}
	for _, c := range checks {
		if c.Status != "FAILURE" && c.Status != "WARNING" {
			continue
		}
		msg := c.ErrorMessage
		if msg == "" {
			msg = c.Description
		}
		if !slices.Contains(r.failing, c.ID) {
			r.failing = append(r.failing, c.ID)
		}
		r.lines = append(r.lines, fmt.Sprintf("%s %s: %s", c.Status, c.ID, msg))
	}
	if m := regexp.MustCompile(`CLIENT EXITED WITH ERROR \(code (-?\d+)\)`).FindStringSubmatch(stderr.String()); m != nil {
		r.failing = append(r.failing, clientExited)
		r.lines = append(r.lines, fmt.Sprintf("%s: the client command exited %s", clientExited, m[1]))
	}
	if strings.Contains(stderr.String(), "CLIENT TIMED OUT") {
		r.failing = append(r.failing, "client-timed-out")
		r.lines = append(r.lines, "client-timed-out: the client command did not end within "+mcpConformanceTimeout.String())
	}
	clientErr, _ := os.ReadFile(filepath.Join(filepath.Dir(checksFile), "stderr.txt"))
	if _, known := mcpConformanceKnownFailures[scenario]; known || !r.pass {
		t.Logf("%s: exit %v; failing checks:\n  %s\nclient output (stderr.txt):\n%s", scenario, err, strings.Join(r.lines, "\n  "), clientErr)
	}
	if !r.pass && len(r.failing) == 0 {
		t.Logf("suite output:\n%s", stderr.String())
	}
	return r
}

// judgeMCPConformance holds a result to the tables.
func judgeMCPConformance(t *testing.T, r mcpConformanceResult) {
	t.Helper()
	kf, known := mcpConformanceKnownFailures[r.scenario]
	switch {
	case !known && !r.pass:
		t.Errorf("%s failed: %s", r.scenario, strings.Join(r.failing, ", "))
	case known && r.pass:
		t.Errorf("%s passes now (known failure of issue %d): move it from mcpConformanceKnownFailures to mcpConformancePassing, and to the pass list in docs/development.md", r.scenario, kf.issue)
	case known:
		want, got := slices.Sorted(slices.Values(kf.checks)), slices.Sorted(slices.Values(r.failing))
		if !slices.Equal(want, got) {
			t.Errorf("%s (issue %d) still fails, but with other checks: failing now %v, the table says %v; update mcpConformanceKnownFailures and docs/development.md", r.scenario, kf.issue, got, want)
		}
	}
}
