package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sampleReport has one result of each kind, as a run with the baseline
// "DISC-07, REG-01" reports it: DISC-07 an expected failure, REG-01 stale.
func sampleReport() *conformance.Report {
	return &conformance.Report{
		Target:   "https://mcp.example.com",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration: 1234 * time.Millisecond,
		Results: []conformance.Result{
			{ID: "DISC-01", Title: "protected resource metadata is served as JSON", Area: "discovery", Source: "contract §Endpoints/Discovery", Verdict: conformance.VerdictPass, Duration: 12 * time.Millisecond},
			{ID: "DISC-07", Title: "issuer is the base URL", Area: "discovery", Source: "contract", Verdict: conformance.VerdictFail, Expected: true, Reason: `issuer: want "https://mcp.example.com", got "https://mcp.example.com/"`, Duration: 8 * time.Millisecond},
			{ID: "REG-01", Title: "registration returns 201", Area: "register", Source: "RFC 7591", Verdict: conformance.VerdictPass, Duration: 20 * time.Millisecond},
			{ID: "REG-11", Title: "a body over 1 MiB is refused with a 4xx", Area: "register", Source: "decisions.md", Verdict: conformance.VerdictFail, Reason: "want a 4xx <413>, got HTTP 500 & co", Duration: 31 * time.Millisecond,
				Exchanges: []conformance.Exchange{sampleExchange}},
			{ID: "PING-10", Title: "the auth scheme is case-insensitive", Area: "ping", Source: "RFC 6750 §2.1", Severity: conformance.Should, Verdict: conformance.VerdictWarn, Reason: "want HTTP 200, got HTTP 401", Duration: 3 * time.Millisecond},
			{ID: "PING-12", Title: "a JWT is refused 24 h + 31 s after issue", Area: "ping", Source: "contract", Verdict: conformance.VerdictSkip, Reason: "needs a test clock to move time by 24h0m31s (or real-time waiting)", Unmet: conformance.NeedTimeTravel},
			{ID: "MCP-03", Title: "protected resource metadata is also at the root location", Area: "mcp", Source: "RFC 9728 §3.1", Severity: conformance.Info, Verdict: conformance.VerdictInfo, Reason: "GET /.well-known/oauth-protected-resource: HTTP 404"},
			{ID: "MCP-07", Title: "the code flow gives a token the MCP endpoint accepts", Area: "mcp", Source: "MCP authorization", Verdict: conformance.VerdictInconclusive, Reason: "the approver could not complete sign-in and consent", Flag: "--browser-command"},
			{ID: "MCP-52", Title: "state comes back unchanged", Area: "mcp", Source: "RFC 6749 §4.1.2", Verdict: conformance.VerdictBlocked,
				Reason: "blocked by MCP-07: the approver could not complete sign-in and consent", Flag: "--browser-command", BlockedBy: "MCP-07"},
		},
		Stale: []string{"REG-01: passes but the baseline expects it to fail; remove the entry"},
	}
}

// sampleExchange is an exchange as a run reports it, secrets redacted
// (the conformance package's tests check the redaction itself).
var sampleExchange = conformance.Exchange{
	Method: "POST", URL: "https://mcp.example.com/oauth/token?code=[redacted 13 chars]&x=1",
	RequestHeaders:  map[string]string{"Authorization": "Bearer [redacted 19 chars]", "Content-Type": "application/x-www-form-urlencoded"},
	RequestBody:     "grant_type=authorization_code&code=[redacted 13 chars]&code_verifier=[redacted 15 chars]&client_id=c1",
	Status:          500,
	ResponseHeaders: map[string]string{"Content-Type": "application/json", "Set-Cookie": "auth_token=[redacted 13 chars]"},
	ResponseBody:    `{"error":"server_error","refresh_token":"[redacted 14 chars]","note":"[redacted 49 chars]"}`,
}

func TestJSONReport(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.json"), buf.Bytes(), *update)
	var back struct {
		Target     string         `json:"target"`
		Started    time.Time      `json:"started"`
		DurationMS int64          `json:"duration_ms"`
		Summary    map[string]int `json:"summary"`
		Checks     []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary["pass"] != 2 || back.Summary["fail"] != 2 || back.Summary["warn"] != 1 || back.Summary["skip"] != 1 {
		t.Errorf("summary %v", back.Summary)
	}
	for _, k := range []string{"id", "title", "area", "source", "severity", "verdict", "reason", "duration_ms"} {
		if _, ok := back.Checks[0][k]; !ok {
			t.Errorf("check entries lack %q", k)
		}
	}
}

// The HTML report stands alone (no scripts, nothing fetched), groups the
// checks by area and shows a failure's exchanges unfolded.
func TestHTMLReport(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<title>mcpauth conformance: https://mcp.example.com</title>", `id="area-register"`, `id="area-mcp"`,
		`<details open><summary>1 HTTP exchange (secrets redacted)</summary>`, "&lt; 500 Internal Server Error", "want a 4xx &lt;413&gt;, got HTTP 500 &amp; co",
		"(to run it: --browser-command)", ">FAIL<", "1 inconclusive"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "<link", "src=", "http-equiv", "secret-"} {
		if strings.Contains(page, banned) {
			t.Errorf("the HTML report has %q: it must stand alone and show no secret", banned)
		}
	}
}

func TestJUnitReport(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.junit.xml"), buf.Bytes(), *update)
	var back junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JUnit output is not well-formed XML: %v", err)
	}
	// DISC-07 expected (skipped), REG-01 stale (failure), REG-11 failure,
	// PING-10 warning (passes, with a WARNING), PING-12 skipped, MCP-03
	// information (passes, with INFO), MCP-07 inconclusive and MCP-52
	// blocked (skipped).
	if back.Tests != 9 || back.Failures != 2 || back.Skipped != 4 || len(back.Suites) != 4 {
		t.Errorf("totals: tests %d failures %d skipped %d suites %d", back.Tests, back.Failures, back.Skipped, len(back.Suites))
	}
	warn := back.Suites[2].Cases[0]
	if !strings.HasPrefix(warn.SystemOut, "WARNING: ") || warn.Failure != nil {
		t.Errorf("the warning case: %+v", warn)
	}
	if info, inc := back.Suites[3].Cases[0], back.Suites[3].Cases[1]; !strings.HasPrefix(info.SystemOut, "INFO: ") || info.Failure != nil ||
		inc.Skipped == nil || !strings.HasPrefix(inc.Skipped.Message, "inconclusive: ") || inc.Failure != nil {
		t.Errorf("the information and inconclusive cases: %+v %+v", info, inc)
	}
	if f := back.Suites[1].Cases[1].Failure; f == nil || f.Message != "want a 4xx <413>, got HTTP 500 & co" {
		t.Errorf("the failure message did not survive escaping: %+v", f)
	}
	if out := back.Suites[1].Cases[1].SystemOut; !strings.Contains(out, "HTTP exchanges (secrets redacted):\n> POST https://mcp.example.com/oauth/token") {
		t.Errorf("the failure's exchanges are not in system-out: %q", out)
	}
}

func TestTextReport(t *testing.T) {
	var plain, color bytes.Buffer
	rep := sampleReport()
	if err := WriteText(&plain, rep, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.txt"), plain.Bytes(), *update)
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Errorf("plain output has ANSI escapes")
	}
	if err := WriteText(&color, rep, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[")) {
		t.Errorf("coloured output has no ANSI escapes")
	}
	env := map[string]string{"NO_COLOR": "1"}
	if ColorFromEnv(func(k string) string { return env[k] }, true) {
		t.Errorf("NO_COLOR ignored")
	}
	if !ColorFromEnv(func(string) string { return "" }, true) || ColorFromEnv(func(string) string { return "" }, false) {
		t.Errorf("ColorFromEnv should follow the terminal when NO_COLOR is unset")
	}
}

// The report fits the terminal: at 80 and 120 columns long titles and
// notes wrap under their row and the target URL stays whole; without a
// width (a pipe, a CI log) every title and note is one line, whole.
func TestTextReportFitsWidth(t *testing.T) {
	const target = "https://mcp-gateway.eu-west-1.internal.example-corporation.com/tenants/acme/mcp"
	const title = "a refresh token replayed after rotation revokes the whole family, access tokens issued from it included"
	rep := sampleReport()
	rep.Target = target
	rep.Results = append(rep.Results, conformance.Result{ID: "REF-09", Title: title, Area: "refresh", Source: "RFC 9700 §4.14.2", Verdict: conformance.VerdictFail,
		Reason: "want HTTP 400 invalid_grant from http://127.0.0.1:18080/some/long/path/token, got HTTP 200 with a new access token", Duration: 1500 * time.Millisecond})
	for _, width := range []int{80, 120, 0} {
		var buf bytes.Buffer
		if err := WriteText(&buf, rep, TextOptions{Width: width, Verbose: true}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		lines := strings.Split(out, "\n")
		for _, line := range lines {
			if width > 0 && len([]rune(line)) > width {
				t.Errorf("width %d: a line is %d wide: %q", width, len([]rune(line)), line)
			}
		}
		if !strings.Contains(out, target+"\n") {
			t.Errorf("width %d: the target URL is not whole:\n%s", width, out)
		}
		if width == 0 {
			if !strings.Contains(out, title+"  1.5s\n") || !strings.Contains(out, rep.Results[6].Reason+"\n") {
				t.Errorf("no width: titles and notes must be whole:\n%s", out)
			}
			continue
		}
		golden.Check(t, filepath.Join("testdata", fmt.Sprintf("report-%d.txt", width)), buf.Bytes(), *update)
	}
}
