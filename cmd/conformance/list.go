package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"

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
	re := lipgloss.NewRenderer(opts.IO.Out)
	re.SetColorProfile(termenv.Ascii)
	if conformance.ColorFromEnv(opts.Getenv, opts.IO.StdoutTTY) {
		re.SetColorProfile(termenv.ANSI256)
	}
	head := re.NewStyle().Bold(true).PaddingRight(2)
	cell := re.NewStyle().PaddingRight(2)
	t := table.New().
		Border(lipgloss.HiddenBorder()).BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).BorderColumn(false).BorderHeader(false).
		Headers("ID", "AREA", "SEVERITY", "NEEDS", "TITLE").
		StyleFunc(func(row, _ int) lipgloss.Style {
			if row == table.HeaderRow {
				return head
			}
			return cell
		})
	for _, c := range checks {
		n := strings.Join(needs(c), ",")
		if n == "" {
			n = "-"
		}
		t.Row(c.ID, c.Area, c.Severity.String(), n, c.Title)
	}
	var b strings.Builder
	for _, line := range strings.Split(t.Render(), "\n") {
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := fmt.Fprintf(opts.IO.Out, "%s%d checks\n", b.String(), len(checks))
	return err
}

func needs(c conformance.Check) []string {
	out := make([]string, 0, len(c.Needs))
	for _, n := range c.Needs {
		out = append(out, n.String())
	}
	return out
}
