package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/report"
	"github.com/mcpauth/mcpauth/internal/textwrap"
)

// listEntry is one check in `--list --json`.
type listEntry struct {
	ID       string   `json:"id"`
	Area     string   `json:"area"`
	Severity string   `json:"severity"`
	Needs    []string `json:"needs"`
	Title    string   `json:"title"`
	Source   string   `json:"source"`
	WaitMS   int64    `json:"wait_ms,omitempty"`
}

// writeList prints the catalogue: a table on stdout (with each check's
// source, and the count by area), or JSON with --json.
func writeList(opts *Options, checks []conformance.Check) error {
	if opts.JSON != "" {
		entries := make([]listEntry, 0, len(checks))
		for _, c := range checks {
			entries = append(entries, listEntry{
				ID: c.ID, Area: c.Area, Severity: c.Severity.String(), Needs: needs(c),
				Title: c.Title, Source: c.Source, WaitMS: c.Wait.Milliseconds(),
			})
		}
		err := writeTo(opts, opts.JSON, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(entries)
		})
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		return nil
	}
	// Bold headers when color is on.
	t := tablefmt.Table{Columns: []tablefmt.Column{
		tablefmt.Col("ID", tablefmt.Fixed), tablefmt.Col("AREA", tablefmt.Fixed), tablefmt.Col("SEVERITY", tablefmt.Fixed),
		tablefmt.Col("NEEDS", tablefmt.Text), tablefmt.Col("TITLE", tablefmt.Text), tablefmt.Col("SOURCE", tablefmt.Text),
	}}
	if report.ColorFromEnv(opts.Getenv, opts.IO.StdoutTTY) {
		re := lipgloss.NewRenderer(opts.IO.Out)
		re.SetColorProfile(termenv.ANSI256)
		bold := re.NewStyle().Bold(true)
		t.HeaderStyle = func(h string) string { return bold.Render(h) }
	}
	for _, c := range checks {
		n := strings.Join(needs(c), ", ")
		if n == "" {
			n = "-"
		}
		t.Rows = append(t.Rows, []string{c.ID, c.Area, c.Severity.String(), n, c.Title, c.Source})
	}
	width := opts.IO.TerminalWidth()
	total := fmt.Sprintf("%d checks%s", len(checks), byArea(checks))
	if width > 0 {
		total = strings.Join(textwrap.Lines(total, width), "\n")
	}
	_, err := fmt.Fprintf(opts.IO.Out, "%s\n%s\n", tablefmt.Render(t, width), total)
	return err
}

func needs(c conformance.Check) []string {
	out := make([]string, 0, len(c.Needs))
	for _, n := range c.Needs {
		out = append(out, n.String())
	}
	return out
}

// byArea counts checks per area, in catalogue order: " (discovery 20, …)".
func byArea(checks []conformance.Check) string {
	var order []string
	n := map[string]int{}
	for _, c := range checks {
		if n[c.Area] == 0 {
			order = append(order, c.Area)
		}
		n[c.Area]++
	}
	parts := make([]string, 0, len(order))
	for _, a := range order {
		parts = append(parts, fmt.Sprintf("%s %d", a, n[a]))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}
