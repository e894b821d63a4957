package interop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// conformanceReport runs `mcpauth conformance --profile mcp` against the
// MCP server (consent is not approved: --approve=none skips the checks that
// need it) and asserts the report comes out whole: exit 0, or 8 for
// findings, each finding with a reason. The findings go into the cell's
// note, by check id, so the README names what the AS does differently.
func conformanceReport(t *testing.T, c *cli, mcpURL string) outcome {
	code, stdout, stderr := c.run("conformance", "--profile", "mcp", mcpURL, "--approve=none", "--json", "-")
	if code != 0 && code != 8 {
		t.Fatalf("conformance --profile mcp: exit %d\nstderr:\n%s", code, stderr)
	}
	var rep struct {
		Results []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Results) == 0 {
		t.Fatalf("report is not JSON with checks (%v):\n%s", err, stdout)
	}
	passed := 0
	var findings []string
	for _, r := range rep.Results {
		switch r.Verdict {
		case "pass":
			passed++
		case "fail", "warn":
			if strings.TrimSpace(r.Reason) == "" {
				t.Errorf("%s: %s without a reason", r.ID, r.Verdict)
			}
			t.Logf("%s %s: %s", r.ID, r.Verdict, r.Reason)
			findings = append(findings, fmt.Sprintf("`%s` %s", r.ID, r.Verdict))
		default:
			t.Logf("%s %s: %s", r.ID, r.Verdict, r.Reason)
		}
	}
	slices.Sort(findings)
	note := fmt.Sprintf("%d checks pass", passed)
	if len(findings) > 0 {
		note += "; findings: " + strings.Join(findings, ", ")
	}
	return pass(note)
}
