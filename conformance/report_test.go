package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/redact"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

// sampleReport has one result of each kind, with a baseline applied.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	b, err := ParseBaseline(strings.NewReader("# known gaps\nDISC-07  # issuer has a slash\nREG-01\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{
		Target:   "https://mcp.example.com",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration: 1234 * time.Millisecond,
		Results: []Result{
			{ID: "DISC-01", Title: "protected resource metadata is served as JSON", Area: "discovery", Source: "contract §Endpoints/Discovery", Verdict: VerdictPass, Duration: 12 * time.Millisecond},
			{ID: "DISC-07", Title: "issuer is the base URL", Area: "discovery", Source: "contract", Verdict: VerdictFail, Reason: `issuer: want "https://mcp.example.com", got "https://mcp.example.com/"`, Duration: 8 * time.Millisecond},
			{ID: "REG-01", Title: "registration returns 201", Area: "register", Source: "RFC 7591", Verdict: VerdictPass, Duration: 20 * time.Millisecond},
			{ID: "REG-11", Title: "a body over 1 MiB is refused with a 4xx", Area: "register", Source: "decisions.md", Verdict: VerdictFail, Reason: "want a 4xx <413>, got HTTP 500 & co", Duration: 31 * time.Millisecond,
				Exchanges: []Exchange{sampleExchange()}},
			{ID: "PING-10", Title: "the auth scheme is case-insensitive", Area: "ping", Source: "RFC 6750 §2.1", Severity: Should, Verdict: VerdictWarn, Reason: "want HTTP 200, got HTTP 401", Duration: 3 * time.Millisecond},
			{ID: "PING-12", Title: "a JWT is refused 24 h + 31 s after issue", Area: "ping", Source: "contract", Verdict: VerdictSkip, Reason: "needs a test clock to move time by 24h0m31s (or real-time waiting)", Unmet: NeedTimeTravel},
			{ID: "MCP-03", Title: "protected resource metadata is also at the root location", Area: "mcp", Source: "RFC 9728 §3.1", Severity: Info, Verdict: VerdictInfo, Reason: "GET /.well-known/oauth-protected-resource: HTTP 404"},
			{ID: "MCP-07", Title: "the code flow gives a token the MCP endpoint accepts", Area: "mcp", Source: "MCP authorization", Verdict: VerdictInconclusive, Reason: "the approver could not complete sign-in and consent", Flag: "--browser-command"},
			{ID: "MCP-52", Title: "state comes back unchanged", Area: "mcp", Source: "RFC 6749 §4.1.2", Verdict: VerdictBlocked,
				Reason: "blocked by MCP-07: the approver could not complete sign-in and consent", Flag: "--browser-command", BlockedBy: "MCP-07"},
		},
	}
	rep.applyBaseline(b, Catalogue())
	return rep
}

func TestBaseline(t *testing.T) {
	rep := sampleReport(t)
	if !rep.Results[1].Expected || rep.Results[3].Expected {
		t.Errorf("Expected flags: DISC-07 %v (want true), REG-11 %v (want false)", rep.Results[1].Expected, rep.Results[3].Expected)
	}
	if len(rep.Stale) != 1 || !strings.HasPrefix(rep.Stale[0], "REG-01: passes") {
		t.Errorf("stale: %q, want REG-01", rep.Stale)
	}
	tests := []struct {
		name     string
		baseline string
		results  []Result
		failed   bool
	}{
		{"unexpected failure", "", []Result{{ID: "DISC-07", Verdict: VerdictFail}}, true},
		{"expected failure", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictFail}}, false},
		{"stale entry", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, true},
		{"unknown entry", "NOPE-01\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, true},
		{"skipped entry is not stale", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictSkip}}, false},
		{"filtered-out entry is not stale", "DISC-08\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, false},
		{"expected warning", "PING-10\n", []Result{{ID: "PING-10", Verdict: VerdictWarn}}, false},
		{"warnings do not fail", "", []Result{{ID: "PING-10", Verdict: VerdictWarn}}, false},
		{"blocked checks do not fail", "", []Result{{ID: "MCP-52", Verdict: VerdictBlocked}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBaseline(strings.NewReader(tt.baseline))
			if err != nil {
				t.Fatal(err)
			}
			rep := &Report{Results: tt.results}
			rep.applyBaseline(b, Catalogue())
			if rep.Failed() != tt.failed {
				t.Errorf("Failed() = %v, want %v (stale %q)", rep.Failed(), tt.failed, rep.Stale)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.failed]; rep.ExitCode() != want {
				t.Errorf("ExitCode() = %d, want %d", rep.ExitCode(), want)
			}
		})
	}
	if _, err := ParseBaseline(strings.NewReader("DISC-01\nnot an id\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: err = %v, want one naming line 2", err)
	}
	path := filepath.Join(t.TempDir(), "baseline.txt")
	if err := os.WriteFile(path, []byte("# none\n\nHDR-05\nHDR-05\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(path)
	if err != nil || len(b.IDs()) != 1 || !b.Has("HDR-05") {
		t.Errorf("LoadBaseline: %v, %v", b.IDs(), err)
	}
}

func TestJSONReport(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", buf.Bytes())
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

// sampleExchange is an exchange as the recorder keeps it: built from a real
// request and answer, so the redaction is the one a run applies.
func sampleExchange() Exchange {
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/oauth/token?code=secret-code-1&x=1", nil)
	req.Header.Set("Authorization", "Bearer secret-access-token")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := &Response{Status: 500, Header: http.Header{
		"Content-Type": {"application/json"}, "Set-Cookie": {"auth_token=secret-cookie"}, "X-Noise": {"dropped"},
	}, Body: []byte(`{"error":"server_error","refresh_token":"secret-refresh","note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"}`)}
	sent := []byte("grant_type=authorization_code&code=secret-code-2&code_verifier=secret-verifier&client_id=c1")
	run := &runState{secrets: &redact.Secrets{}}
	run.learn(req, sent, resp)
	var t transcript
	t.add(newRecord(req, sent, resp))
	return t.exchanges(run.secrets)[0]
}

// Secrets never reach a report: tokens, codes, verifiers and cookies are
// redacted in URLs, headers and bodies, and what explains the verdict
// stays.
func TestExchangeRedaction(t *testing.T) {
	x := sampleExchange()
	text := x.Text()
	for _, secret := range []string{"secret-", "eyJhbGci"} {
		if strings.Contains(text, secret) {
			t.Errorf("the transcript shows %q:\n%s", secret, text)
		}
	}
	for _, kept := range []string{"> POST https://mcp.example.com/oauth/token?", "x=1", "Authorization: Bearer [redacted 19 chars]", "client_id=c1",
		"grant_type=authorization_code", "< 500 Internal Server Error", `"error":"server_error"`, "Set-Cookie: auth_token=[redacted 13 chars]"} {
		if !strings.Contains(text, kept) {
			t.Errorf("the transcript lacks %q:\n%s", kept, text)
		}
	}
	if strings.Contains(text, "X-Noise") {
		t.Errorf("headers nobody needs are shown:\n%s", text)
	}
}

// The HTML report stands alone (no scripts, nothing fetched), groups the
// checks by area and shows a failure's exchanges unfolded.
func TestHTMLReport(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteHTML(&buf); err != nil {
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
	if err := sampleReport(t).WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.junit.xml", buf.Bytes())
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
	rep := sampleReport(t)
	if err := rep.WriteText(&plain, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", plain.Bytes())
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Errorf("plain output has ANSI escapes")
	}
	if err := rep.WriteText(&color, TextOptions{Color: true}); err != nil {
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

func TestHTTPClock(t *testing.T) {
	// The protocol of `mcpauth serve --test-clock`, as the server speaks it.
	var offset time.Duration
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_clock" {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodPost {
			var req struct{ Advance string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			d, err := time.ParseDuration(req.Advance)
			if err != nil {
				http.Error(w, "bad advance", http.StatusBadRequest)
				return
			}
			offset += d
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"now": t0.Add(offset), "offset_ms": offset.Milliseconds()})
	}))
	defer s.Close()
	c := &HTTPClock{URL: s.URL + "/_clock"}
	ctx := context.Background()
	before, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Advance(ctx, 10*time.Minute+time.Second); err != nil {
		t.Fatal(err)
	}
	after, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Now.Sub(before.Now); got != 10*time.Minute+time.Second {
		t.Errorf("clock moved %s, want 10m1s", got)
	}
	if err := (&HTTPClock{URL: s.URL + "/nope"}).Advance(ctx, time.Second); err == nil {
		t.Errorf("advancing a missing clock endpoint succeeded")
	}
}

// The report fits the terminal: at 80 and 120 columns long titles and
// notes wrap under their row and the target URL stays whole; without a
// width (a pipe, a CI log) every title and note is one line, whole.
func TestTextReportFitsWidth(t *testing.T) {
	const target = "https://mcp-gateway.eu-west-1.internal.example-corporation.com/tenants/acme/mcp"
	const title = "a refresh token replayed after rotation revokes the whole family, access tokens issued from it included"
	rep := sampleReport(t)
	rep.Target = target
	rep.Results = append(rep.Results, Result{ID: "REF-09", Title: title, Area: "refresh", Source: "RFC 9700 §4.14.2", Verdict: VerdictFail,
		Reason: "want HTTP 400 invalid_grant from http://127.0.0.1:18080/some/long/path/token, got HTTP 200 with a new access token", Duration: 1500 * time.Millisecond})
	for _, width := range []int{80, 120, 0} {
		var buf bytes.Buffer
		if err := rep.WriteText(&buf, TextOptions{Width: width, Verbose: true}); err != nil {
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
		golden(t, fmt.Sprintf("report-%d.txt", width), buf.Bytes())
	}
}
