package conformance

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs `mcpauth conformance args…` with test streams and returns the
// exit code root.ExitCode would give. configure may adjust the streams and
// environment before the run.
func runCmd(t *testing.T, env map[string]string, configure func(*cmdutil.IOStreams), args ...string) result {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	if configure != nil {
		configure(ios)
	}
	f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
	cmd := NewCmd(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(errOut)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	code := clierr.ExitOK
	var ee *clierr.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
	case err != nil:
		code = clierr.ExitFailure
	}
	if err != nil && !errors.Is(err, clierr.ErrSilent) {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return result{code, out.String(), errOut.String()}
}

// jsonReport is the part of the JSON report the tests read.
type jsonReport struct {
	DurationMS int64 `json:"duration_ms"`
	Summary    struct{ Pass, Fail, Warn, Skip, Inconclusive int }
	Checks     []struct {
		ID, Verdict, Reason, Flag string
	}
	Stale []string
}

func readJSONReport(t *testing.T, b []byte) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	return r
}

func verdicts(r jsonReport) map[string]string {
	m := map[string]string{}
	for _, c := range r.Checks {
		m[c.ID] = c.Verdict
	}
	return m
}

func TestLocalPassesTheWholeSuite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	start := time.Now() // measures the test, not logic
	res := runCmd(t, nil, nil, "--local", "--json", path)
	wall := time.Since(start)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := readJSONReport(t, b)
	ran := 0
	for _, c := range rep.Checks {
		switch c.Verdict {
		case "pass":
			ran++
		case "fail", "warn":
			ran++
			t.Errorf("%s: %s: %s", c.ID, c.Verdict, c.Reason)
		case "skip":
			// The SSRF guard cannot be seen while --local fetches from
			// loopback (below, without it).
			if c.ID != "CIMD-07" {
				t.Errorf("%s skipped with every need met: %s", c.ID, c.Reason)
			}
		}
	}
	if len(rep.Checks) != len(conformance.Catalogue()) {
		t.Errorf("report has %d checks, want the whole catalogue (%d)", len(rep.Checks), len(conformance.Catalogue()))
	}
	if ran < 100 {
		t.Errorf("%d checks ran, want at least 100", ran)
	}
	if !strings.Contains(res.stdout, "PASS") || !strings.Contains(res.stdout, " passed, 0 failed") {
		t.Errorf("the text report on stdout lacks the verdict line:\n%s", res.stdout)
	}
	t.Logf("--local: %+v; suite %d ms (report), command %s (wall, server start included)", rep.Summary, rep.DurationMS, wall.Round(time.Millisecond))

	res = runCmd(t, nil, nil, "--local", "--cimd-private=false", "--run", "^CIMD-", "--json", "-")
	v := verdicts(readJSONReport(t, []byte(res.stdout)))
	if res.code != 0 || v["CIMD-07"] != "pass" || v["CIMD-01"] != "skip" {
		t.Errorf("--local --cimd-private=false: exit %d, CIMD-07 %q, CIMD-01 %q, want pass and skip\n%s", res.code, v["CIMD-07"], v["CIMD-01"], res.stderr)
	}
}

// --profile mcp checks the in-process server from its MCP endpoint; an
// unknown profile is a usage error.
func TestLocalMCPProfile(t *testing.T) {
	res := runCmd(t, nil, nil, "--local", "--profile", "mcp", "--json", "-")
	v := verdicts(readJSONReport(t, []byte(res.stdout)))
	if res.code != 0 || len(v) != len(conformance.MCPCatalogue()) {
		t.Fatalf("exit %d, %d verdicts, want 0 and %d\n%s", res.code, len(v), len(conformance.MCPCatalogue()), res.stderr)
	}
	for id, verdict := range v {
		if verdict != "pass" {
			t.Errorf("%s: %s", id, verdict)
		}
	}
	if res := runCmd(t, nil, nil, "--local", "--profile", "oauth"); res.code != 2 {
		t.Errorf("--profile oauth: exit %d, want 2", res.code)
	}
}

func TestLocalWithSQLite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mcpauth.db")
	res := runCmd(t, nil, nil, "--local", "--db", db, "--run", "^(TOKEN|DEV|KEY)-", "--json", "-")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	rep := readJSONReport(t, []byte(res.stdout))
	if rep.Summary.Fail+rep.Summary.Skip > 0 || rep.Summary.Pass < 50 {
		t.Errorf("summary %+v, want only passes (≥ 50)", rep.Summary)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("--db file was not used: %v", err)
	}
	if !strings.Contains(res.stderr, "PASS") {
		t.Errorf("with --json - the text report goes to stderr; got:\n%s", res.stderr)
	}
}

func TestListPrintsEveryCheck(t *testing.T) {
	res := runCmd(t, nil, nil, "--list")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, c := range conformance.Catalogue() {
		if !strings.Contains(res.stdout, c.ID+" ") {
			t.Errorf("--list lacks %s", c.ID)
		}
	}
	if !strings.Contains(res.stdout, "approval, time-travel") {
		t.Errorf("--list does not show needs:\n%s", res.stdout)
	}
	// The mcp profile: at least 60 checks, each with its source.
	res = runCmd(t, nil, nil, "--list", "--profile", "mcp")
	for _, c := range conformance.MCPCatalogue() {
		if !strings.Contains(res.stdout, c.ID+" ") || !strings.Contains(res.stdout, c.Source) {
			t.Errorf("--list --profile mcp lacks %s or its source %q", c.ID, c.Source)
		}
	}
	if n := len(conformance.MCPCatalogue()); n < 60 || !strings.Contains(res.stdout, fmt.Sprintf("%d checks: resource-metadata ", n)) {
		t.Errorf("--list --profile mcp: %d checks, want at least 60 and the count by area:\n%s", n, res.stdout)
	}

	for _, width := range []int{80, 200} {
		res := runCmd(t, nil, func(ios *cmdutil.IOStreams) { ios.Width = width }, "--list")
		if w := tablefmt.Widest(res.stdout); w > width || !strings.Contains(res.stdout, "DISC-01 ") {
			t.Errorf("--list at %d columns: a line %d wide:\n%s", width, w, res.stdout)
		}
	}

	res = runCmd(t, nil, nil, "--list", "--json", "-", "--run", "^PING-1[12]$")
	var list []listEntry
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil {
		t.Fatalf("--list --json -: %v\n%s", err, res.stdout)
	}
	if len(list) != 2 || list[0].ID != "PING-11" || list[1].Needs[1] != "time-travel" || list[1].WaitMS == 0 {
		t.Errorf("--list --json --run: got %+v", list)
	}
}

func TestRunFilter(t *testing.T) {
	res := runCmd(t, nil, nil, "--local", "--run", "^DISC-", "--json", "-")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	rep := readJSONReport(t, []byte(res.stdout))
	want := 0
	for _, c := range conformance.Catalogue() {
		if strings.HasPrefix(c.ID, "DISC-") {
			want++
		}
	}
	if len(rep.Checks) != want || want == 0 {
		t.Errorf("ran %d checks, want the %d DISC- checks", len(rep.Checks), want)
	}
	for _, c := range rep.Checks {
		if !strings.HasPrefix(c.ID, "DISC-") || c.Verdict != "pass" {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
}

func TestStaleBaselineFails(t *testing.T) {
	for name, baseline := range map[string]string{
		"passing check listed": "# expected failures\nDISC-01\n",
		"unknown check listed": "ZZZ-99\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "baseline.txt")
			if err := os.WriteFile(path, []byte(baseline), 0o600); err != nil {
				t.Fatal(err)
			}
			res := runCmd(t, nil, nil, "--local", "--run", "^DISC-0[12]$", "--baseline", path, "--json", "-")
			if res.code != clierr.ExitCheckFailed {
				t.Fatalf("exit %d, want %d\n%s", res.code, clierr.ExitCheckFailed, res.stderr)
			}
			rep := readJSONReport(t, []byte(res.stdout))
			if len(rep.Stale) != 1 || rep.Summary.Fail != 0 {
				t.Errorf("stale %q, summary %+v; want one stale entry and no failed check", rep.Stale, rep.Summary)
			}
			if !strings.Contains(res.stderr, "stale baseline") {
				t.Errorf("the text report does not show the stale baseline:\n%s", res.stderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--local", "http://127.0.0.1:1"},
		{"http://127.0.0.1:1", "--approve", "robot"},
		{"--local", "--clock-url", "http://127.0.0.1:1/api/test/clock"},
		{"--local", "--approve", "manual"},
		{"http://127.0.0.1:1", "--db", "x.db"},
		{"--local", "--run", "("},
		{"--local", "--json", "-", "--junit", "-"},
		{"--local", "--html", "-", "--junit", "-"},
		{"--list", "--html", "x.html"},
		{"--local", "--baseline", "/nonexistent/baseline"},
		{"--list", "--junit", "x.xml"},
		{"http://127.0.0.1:1", "--browser-command", "true", "--approve", "form"},
		{"--local", "--browser-command", "true"},
		// Pre-registered clients: the mcp profile only, ids before secrets.
		{"http://127.0.0.1:1", "--client-id", "c"},
		{"--local", "--profile", "mcp", "--client-id", "c"},
		{"--profile", "mcp", "http://127.0.0.1:1", "--client-secret", "s"},
		{"--profile", "mcp", "http://127.0.0.1:1", "--client-id-2", "d"},
		{"--profile", "mcp", "http://127.0.0.1:1", "--client-id", "c", "--client-secret-2", "s"},
		{"--profile", "mcp", "http://127.0.0.1:1", "--client-id", "c", "--client-id-2", "c"},
	} {
		if res := runCmd(t, nil, nil, args...); res.code != clierr.ExitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, res.code, clierr.ExitUsage, res.stderr)
		}
	}
}

func TestUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res := runCmd(t, nil, nil, "http://"+addr)
	if res.code != clierr.ExitNetwork || !strings.Contains(res.stderr, "cannot reach") {
		t.Errorf("exit %d, want %d with 'cannot reach'\n%s", res.code, clierr.ExitNetwork, res.stderr)
	}
}

func TestProgressOnATerminal(t *testing.T) {
	tty := func(s *cmdutil.IOStreams) { s.StderrTTY = true }
	res := runCmd(t, nil, tty, "--local", "--run", "^DEV-1[56]$")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "running DEV-15") || !strings.HasSuffix(res.stderr, "\r\x1b[K") {
		t.Errorf("want a status line naming the running check, cleared at the end; got %q", res.stderr)
	}
	// The status line is rewritten in place: it must never wrap.
	narrow := runCmd(t, nil, func(s *cmdutil.IOStreams) { s.StderrTTY, s.Width = true, 20 }, "--local", "--run", "^DEV-1[56]$")
	for _, line := range strings.Split(narrow.stderr, "\r\x1b[K") {
		if n := len([]rune(line)); n > 19 {
			t.Errorf("a status line of %d columns on a 20-column terminal: %q", n, line)
		}
	}
	quiet := runCmd(t, nil, nil, "--local", "--run", "^DEV-1[56]$")
	if quiet.stderr != "" {
		t.Errorf("progress on a non-terminal stderr: %q", quiet.stderr)
	}
}

// startServe runs `mcpauth serve --test-clock` in-process on a free loopback
// port with a SQLite file, and stops it when the test ends.
func startServe(t *testing.T) string {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, &serve.Options{
			IO: ios, Getenv: func(string) string { return "" },
			Addr: "127.0.0.1:0", DevIdPAddr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "serve.db"),
			TestClock: true, LogFormat: "text", LogLevel: "error",
			Ready: func(base string) { ready <- base },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case base := <-ready:
		return base
	case err := <-done:
		done <- err // for the cleanup, which waits for serve to end
		t.Fatalf("serve did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start within 30 s")
	}
	return ""
}

// junitReport is the part of the JUnit XML the test reads.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestAgainstServeWithTestClock(t *testing.T) {
	base := startServe(t)
	dir := t.TempDir()
	junitPath, jsonPath := filepath.Join(dir, "conformance.xml"), filepath.Join(dir, "report.json")
	res := runCmd(t, nil, nil, base, "--clock-url", base+"/api/test/clock", "--approve=form",
		"--junit", junitPath, "--json", jsonPath)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	var ju junitReport
	if err := xml.Unmarshal(b, &ju); err != nil {
		t.Fatalf("JUnit report is not valid XML: %v", err)
	}
	n := len(conformance.Catalogue())
	cases, skipped := 0, map[string]string{}
	for _, s := range ju.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				t.Errorf("JUnit failure: %s", c.Name)
			}
			if c.Skipped != nil {
				skipped[strings.Fields(c.Name)[0]] = c.Skipped.Message
			}
		}
	}
	if ju.Tests != n || cases != n || ju.Failures != 0 {
		t.Errorf("JUnit: tests=%d cases=%d failures=%d, want %d, %d, 0", ju.Tests, cases, ju.Failures, n, n)
	}
	// Only the destructive check is left out without --destructive, and
	// the metadata document checks: serve runs without --cimd-allow-private,
	// and the machine client checks: nor with --machine-clients.
	for _, c := range conformance.Catalogue() {
		if c.Has(conformance.NeedCIMDPrivate) && strings.Contains(skipped[c.ID], "--cimd-private") ||
			c.Has(conformance.NeedMachineClient) && strings.Contains(skipped[c.ID], "--machine-client-id") {
			delete(skipped, c.ID)
		}
	}
	if len(skipped) != 1 || !strings.Contains(skipped["KEY-06"], "destructive") {
		t.Errorf("skipped: %v, want only KEY-06 (destructive), the metadata document and the machine client checks", skipped)
	}
	jb, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	rep := readJSONReport(t, jb)
	t.Logf("--clock-url against mcpauth serve --test-clock: %+v in %d ms", rep.Summary, rep.DurationMS)

	// With --destructive the API key check runs too.
	res = runCmd(t, nil, nil, base, "--clock-url", base+"/api/test/clock", "--approve=form", "--destructive", "--run", "^KEY-06$", "--json", "-")
	if v := verdicts(readJSONReport(t, []byte(res.stdout))); res.code != 0 || v["KEY-06"] != "pass" {
		t.Errorf("--destructive: exit %d, KEY-06 %q\n%s", res.code, v["KEY-06"], res.stderr)
	}
}

// The mcp profile against `mcpauth serve`, from its MCP endpoint as any
// MCP client finds it: no check fails, warns or is inconclusive; only the
// metadata document checks are skipped (serve runs without
// --cimd-allow-private).
func TestMCPProfileAgainstServe(t *testing.T) {
	base := startServe(t)
	res := runCmd(t, nil, nil, "--profile", "mcp", base+"/mcp", "--clock-url", base+"/api/test/clock", "--approve=form", "--json", "-")
	rep := readJSONReport(t, []byte(res.stdout))
	if res.code != 0 || rep.Summary.Fail != 0 || len(rep.Checks) != len(conformance.MCPCatalogue()) {
		t.Fatalf("exit %d, summary %+v, %d checks\n%s", res.code, rep.Summary, len(rep.Checks), res.stderr)
	}
	for _, c := range rep.Checks {
		cimd := strings.Contains(c.Reason, "--cimd-private")
		if c.Verdict != "pass" && !(c.Verdict == "skip" && cimd) {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
	t.Logf("--profile mcp against mcpauth serve: %+v in %d ms", rep.Summary, rep.DurationMS)
}

func TestSessionCookieAndAPIKey(t *testing.T) {
	base := startServe(t)
	ctx := context.Background()
	a, err := approve.NewFormApprover(base, "key-holder", nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := a.APIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cookies, err := a.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	session := ""
	for _, c := range cookies {
		if c.Name == "auth_token" {
			session = c.Value
		}
	}
	// No approver: the key comes from the environment, the session from a flag.
	res := runCmd(t, map[string]string{"MCPAUTH_API_KEY": key}, nil,
		base, "--session-cookie", session, "--run", "^(KEY-0[1-6]|LOGIN-0[45]|HDR-07)$", "--json", "-")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	got := verdicts(readJSONReport(t, []byte(res.stdout)))
	want := map[string]string{
		"KEY-01": "pass", "KEY-02": "pass", "KEY-03": "pass", "KEY-04": "pass",
		"KEY-05":   "skip", // compares with a JWT from an approval: none here
		"KEY-06":   "skip", // regenerating needs an approver
		"LOGIN-04": "skip", // a given cookie's attributes are unknown
		"LOGIN-05": "pass", "HDR-07": "pass",
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: %s, want %s", id, got[id], v)
		}
	}
}

// The text report of a real run fits the terminal at 80 and 120 columns
// with the target URL whole; a pipe (no width) gets every title whole.
// The target is a path the server does not serve, so most checks fail
// with long reasons naming URLs.
func TestReportFitsTheTerminal(t *testing.T) {
	target := startServe(t) + "/some/long/path/mcp"
	for _, width := range []int{80, 120, 0} {
		res := runCmd(t, nil, func(ios *cmdutil.IOStreams) { ios.Width = width }, "--profile", "mcp", target)
		if res.code != clierr.ExitCheckFailed {
			t.Fatalf("exit %d, want %d\n%s%s", res.code, clierr.ExitCheckFailed, res.stdout, res.stderr)
		}
		if w := tablefmt.Widest(res.stdout); width > 0 && w > width {
			t.Errorf("COLUMNS=%d: a line %d wide:\n%s", width, w, res.stdout)
		}
		if !strings.Contains(res.stdout, target+"\n") {
			t.Errorf("COLUMNS=%d: the target URL is not whole:\n%s", width, res.stdout)
		}
		if width == 0 {
			for _, c := range conformance.MCPCatalogue() {
				if !strings.Contains(res.stdout, " "+c.Title+"  ") {
					t.Errorf("a pipe gets %s's title cut: %q\n%s", c.ID, c.Title, res.stdout)
				}
			}
		}
		t.Logf("COLUMNS=%d:\n%s", width, res.stdout)
	}
}

// A run that skips checks for want of an approver, a test clock and the
// like closes with the options that would run them, the largest group
// first: against a plain `mcpauth serve` that is --approve=form.
func TestSkippedChecksNameTheirFlags(t *testing.T) {
	base := startServe(t)
	pipe := runCmd(t, nil, nil, base) // no width: every note on one line
	approvals := strings.Count(pipe.stdout, "needs an approver to approve consent screens and device codes (--approve=form or --approve=manual)\n")
	res := runCmd(t, nil, func(ios *cmdutil.IOStreams) { ios.Width = 80 }, base)
	if res.code != 0 || pipe.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	_, hints, ok := strings.Cut(res.stdout, "skipped checks would run with:\n")
	if !ok || approvals == 0 {
		t.Fatalf("no closing hint, or no check skipped for want of an approver (%d):\n%s", approvals, res.stdout)
	}
	if w := tablefmt.Widest(hints); w > 80 {
		t.Errorf("a hint line %d wide:\n%s", w, hints)
	}
	lines := strings.Split(strings.TrimRight(hints, "\n"), "\n")
	first := strings.Fields(lines[0])
	if len(first) < 3 || first[0] != strconv.Itoa(approvals) || first[2] != "--approve=browser" {
		t.Errorf("first hint %q; want the %d checks that need an approver, naming --approve=browser", lines[0], approvals)
	}
	// The summary says plainly what a PASS without an approver leaves out,
	// and every way to approve is named.
	if !strings.Contains(pipe.stdout, fmt.Sprintf("\n%d checks that need a sign-in did not run: no approver", approvals)) {
		t.Errorf("the summary does not say that the %d checks needing a sign-in did not run:\n%s", approvals, pipe.stdout)
	}
	for _, want := range []string{"--clock-url", "--cimd-private", "--api-key-file", "--session-cookie-file",
		"--approve=manual", "--browser-command"} {
		if !strings.Contains(hints, want) {
			t.Errorf("the hint does not name %s:\n%s", want, hints)
		}
	}
	// With every need met (--local) there is nothing to hint.
	if res := runCmd(t, nil, nil, "--local", "--run", "^DISC-0[12]$"); res.code != 0 || strings.Contains(res.stdout, "would run with") {
		t.Errorf("--local: exit %d, hints at options:\n%s", res.code, res.stdout)
	}
}
