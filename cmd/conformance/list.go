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

// writeList prints the catalogue: a table on stdout, or JSON with --json.
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
		tablefmt.Col("NEEDS", tablefmt.Text), tablefmt.Col("TITLE", tablefmt.Text),
	}}
	if conformance.ColorFromEnv(opts.Getenv, opts.IO.StdoutTTY) {
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
		t.Rows = append(t.Rows, []string{c.ID, c.Area, c.Severity.String(), n, c.Title})
	}
	_, err := fmt.Fprintf(opts.IO.Out, "%s\n%d checks\n", tablefmt.Render(t, opts.IO.TerminalWidth()), len(checks))
	return err
}

func needs(c conformance.Check) []string {
	out := make([]string, 0, len(c.Needs))
	for _, n := range c.Needs {
		out = append(out, n.String())
	}
	return out
}
