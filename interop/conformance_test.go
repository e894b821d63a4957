package interop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// labReport is the part of `mcpauth conformance --json` the lab reads.
type labReport struct {
	Summary map[string]any `json:"summary"`
	Checks  []struct {
		ID        string            `json:"id"`
		Verdict   string            `json:"verdict"`
		Reason    string            `json:"reason"`
		Flag      string            `json:"flag"`
		Exchanges []json.RawMessage `json:"exchanges"`
	} `json:"checks"`
}

// runConformance runs `mcpauth conformance --profile mcp` against the MCP
// server with approval (the approver's flags; none skips the checks that
// need consent) and asserts the report comes out whole: exit 0, or 8 for
// findings, and every verdict but a pass with a reason.
func runConformance(t *testing.T, c *cli, mcpURL string, approval ...string) (int, labReport) {
	t.Helper()
	args := append([]string{"conformance", "--profile", "mcp", mcpURL, "--json", "-"}, approval...)
	code, stdout, stderr := c.run(args...)
	if code != 0 && code != 8 {
		t.Fatalf("conformance --profile mcp: exit %d\nstderr:\n%s", code, stderr)
	}
	var rep labReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Checks) == 0 {
		t.Fatalf("report is not JSON with checks (%v):\n%s", err, stdout)
	}
	for _, r := range rep.Checks {
		if r.Verdict != "pass" {
			if strings.TrimSpace(r.Reason) == "" {
				t.Errorf("%s: %s without a reason", r.ID, r.Verdict)
			}
			t.Logf("%s %s: %s", r.ID, r.Verdict, r.Reason)
		}
	}
	return code, rep
}

// conformanceReport is the conformance cell without a browser step
// (--approve=none): the findings go into the cell's note, by check id, so
// the README names what the AS does differently.
func conformanceReport(t *testing.T, c *cli, mcpURL string) outcome {
	_, rep := runConformance(t, c, mcpURL, "--approve=none")
	return pass(rep.note())
}

// note counts the passes and names the failures and warnings.
func (rep labReport) note() string {
	passed := 0
	var findings []string
	for _, r := range rep.Checks {
		switch r.Verdict {
		case "pass":
			passed++
		case "fail", "warn":
			findings = append(findings, fmt.Sprintf("`%s` %s", r.ID, r.Verdict))
		}
	}
	slices.Sort(findings)
	note := fmt.Sprintf("%d checks pass", passed)
	if len(findings) > 0 {
		note += "; findings: " + strings.Join(findings, ", ")
	}
	return note
}
