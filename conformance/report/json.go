package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
)

type jsonReport struct {
	Target     string              `json:"target"`
	Started    string              `json:"started"`
	DurationMS int64               `json:"duration_ms"`
	Summary    conformance.Summary `json:"summary"`
	Checks     []jsonResult        `json:"checks"`
	Stale      []string            `json:"stale,omitempty"`
}

type jsonResult struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Area       string `json:"area"`
	Source     string `json:"source"`
	Severity   string `json:"severity"`
	Verdict    string `json:"verdict"`
	Reason     string `json:"reason"`
	Flag       string `json:"flag,omitempty"`
	BlockedBy  string `json:"blocked_by,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Expected   bool   `json:"expected_failure,omitempty"`
	// Exchanges: what the server answered, for each check that did not pass.
	Exchanges []conformance.Exchange `json:"exchanges,omitempty"`
}

// WriteJSON writes the report as indented JSON. The fields expected_failure
// and stale appear only when a baseline was used.
func WriteJSON(w io.Writer, r *conformance.Report) error {
	out := jsonReport{
		Target:     r.Target,
		Started:    r.Started.UTC().Format(time.RFC3339Nano),
		DurationMS: r.Duration.Milliseconds(),
		Summary:    r.Summary(),
		Checks:     make([]jsonResult, 0, len(r.Results)),
		Stale:      r.Stale,
	}
	for _, res := range r.Results {
		out.Checks = append(out.Checks, jsonResult{
			ID: res.ID, Title: res.Title, Area: res.Area, Source: res.Source,
			Severity: res.Severity.String(), Verdict: string(res.Verdict), Reason: res.Reason, Flag: res.Flag, BlockedBy: res.BlockedBy,
			DurationMS: res.Duration.Milliseconds(), Expected: res.Expected, Exchanges: res.Exchanges,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	return nil
}
