package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/textwrap"
)

// TextOptions tune the human-readable report.
type TextOptions struct {
	Color   bool // false: plain text (NO_COLOR, pipes, CI logs)
	Verbose bool // also show the source of each check
	// Width is the terminal's width: titles and notes wrap to fit it. 0
	// (pipes, CI logs) prints every title and note whole on one line.
	Width int
}

// ColorFromEnv reports whether colour is wanted: never when NO_COLOR is set
// (https://no-color.org), otherwise when the output is a terminal.
func ColorFromEnv(getenv func(string) string, isTerminal bool) bool {
	return getenv("NO_COLOR") == "" && isTerminal
}

// WriteText renders the report as a table grouped by area:
//
//	discovery
//	  ✓ DISC-01  protected resource metadata is served as JSON      12ms
//	  ✗ DISC-07  issuer is the base URL                              8ms
//	      issuer: want "https://x", got "https://x/"
//
// ✓ pass, ✗ fail, ! warning (a Should check failed), i information (an Info
// check found something), ? inconclusive (the suite's setup failed: not a
// failure of the server), ⊘ blocked (a step another check reports failed),
// − skipped.
func WriteText(w io.Writer, r *conformance.Report, opts TextOptions) error {
	re := lipgloss.NewRenderer(w)
	if opts.Color {
		re.SetColorProfile(termenv.ANSI256)
	} else {
		re.SetColorProfile(termenv.Ascii)
	}
	var (
		area   = re.NewStyle().Bold(true)
		pass   = re.NewStyle().Foreground(lipgloss.Color("2"))
		fail   = re.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
		warn   = re.NewStyle().Foreground(lipgloss.Color("3"))
		skip   = re.NewStyle().Foreground(lipgloss.Color("8"))
		faint  = re.NewStyle().Faint(true)
		reason = re.NewStyle().PaddingLeft(6)
	)
	lay := newLayout(r.Results, opts.Width)
	var b strings.Builder
	header := area.Render("mcpauth conformance") + " " + r.Target
	if opts.Width > 0 && lipgloss.Width(header) > opts.Width {
		header = area.Render("mcpauth conformance") + "\n" + r.Target // the URL whole, on a line of its own
	}
	b.WriteString(header + "\n")
	last := ""
	for _, res := range r.Results {
		if res.Area != last {
			fmt.Fprintf(&b, "\n%s\n", area.Render(res.Area))
			last = res.Area
		}
		var mark string
		switch {
		case res.Expected:
			mark = skip.Render("x")
		case res.Verdict == conformance.VerdictPass:
			mark = pass.Render("✓")
		case res.Verdict == conformance.VerdictFail:
			mark = fail.Render("✗")
		case res.Verdict == conformance.VerdictWarn:
			mark = warn.Render("!")
		case res.Verdict == conformance.VerdictInfo:
			mark = skip.Render("i")
		case res.Verdict == conformance.VerdictInconclusive:
			mark = warn.Render("?")
		case res.Verdict == conformance.VerdictBlocked:
			mark = skip.Render("⊘")
		default:
			mark = skip.Render("−")
		}
		title := lay.wrap(res.Title, lay.titleW)
		pad := strings.Repeat(" ", lay.titleW-lipgloss.Width(title[0]))
		fmt.Fprintf(&b, "  %s %-9s %s%s  %s\n", mark, res.ID, title[0], pad, faint.Render(fmtDuration(res.Duration)))
		for _, line := range title[1:] {
			b.WriteString(strings.Repeat(" ", rowIndent) + line + "\n")
		}
		note := res.Reason
		if res.Expected {
			note = "expected failure (baseline): " + note
		}
		if res.Flag != "" {
			note += " (to run it: " + res.Flag + ")"
		}
		if note != "" && res.Verdict != conformance.VerdictPass {
			st := reason
			switch {
			case res.Expected || res.Verdict == conformance.VerdictSkip || res.Verdict == conformance.VerdictInfo || res.Verdict == conformance.VerdictBlocked:
				st = st.Inherit(skip)
			case res.Verdict == conformance.VerdictFail:
				st = st.Inherit(fail.UnsetBold())
			case res.Verdict == conformance.VerdictWarn || res.Verdict == conformance.VerdictInconclusive:
				st = st.Inherit(warn)
			}
			lay.note(&b, st, note)
		}
		if opts.Verbose {
			lay.note(&b, reason.Inherit(faint), res.Source)
		}
	}
	if len(r.Stale) > 0 {
		fmt.Fprintf(&b, "\n%s\n", fail.Render("stale baseline"))
		for _, s := range r.Stale {
			lines := lay.wrap(s, lay.width-4)
			fmt.Fprintf(&b, "  %s %s\n", fail.Render("✗"), lines[0])
			for _, line := range lines[1:] {
				b.WriteString("    " + line + "\n")
			}
		}
	}
	s := r.Summary()
	verdict := pass.Render("PASS")
	if r.Failed() {
		verdict = fail.Render("FAIL")
	}
	// Info and inconclusive counts appear only when there are any, so the
	// line stays what scripts of the contract profile read.
	extra := ""
	if s.Info > 0 {
		extra += fmt.Sprintf(", %d info", s.Info)
	}
	if s.Inconclusive > 0 {
		extra += fmt.Sprintf(", %d inconclusive", s.Inconclusive)
	}
	if s.Blocked > 0 {
		extra += fmt.Sprintf(", %d blocked", s.Blocked)
	}
	counts := lay.wrap(fmt.Sprintf("%d passed, %d failed, %d warned, %d skipped%s in %s",
		s.Pass, s.Fail, s.Warn, s.Skip, extra, fmtDuration(r.Duration)), lay.width-noteIndent)
	fmt.Fprintf(&b, "\n%s  %s\n", verdict, strings.Join(counts, "\n"+strings.Repeat(" ", noteIndent)))
	if note := unsignedNote(r.Results); note != "" {
		lay.note(&b, reason.UnsetPaddingLeft().Inherit(warn), note)
	}
	lay.writeSkipHints(&b, SkipHints(r))
	if s.Inconclusive > 0 {
		lay.note(&b, reason.UnsetPaddingLeft().Inherit(warn), fmt.Sprintf(
			"%d inconclusive: the suite could not complete their setup, so the server was not judged there; they do not fail the run", s.Inconclusive))
	}
	if s.Blocked > 0 {
		lay.note(&b, reason.UnsetPaddingLeft().Inherit(skip), fmt.Sprintf(
			"%d blocked: a step they need failed and the check each names reports it; they were not judged and do not fail the run", s.Blocked))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// A row is "  ✓ DISC-01   title  12ms": the title starts at rowIndent, a
// note under it at noteIndent.
const (
	rowIndent  = 14
	noteIndent = 6
	minTitle   = 24 // narrower terminals wrap titles a word or two a line
)

// layout is how wide the report's columns are.
type layout struct {
	width  int // 0: unlimited
	titleW int
}

// newLayout gives titles the columns a row leaves beside its duration.
func newLayout(results []conformance.Result, width int) layout {
	l := layout{width: width}
	durW := 0
	for _, res := range results {
		l.titleW = max(l.titleW, lipgloss.Width(res.Title))
		durW = max(durW, len(fmtDuration(res.Duration)))
	}
	if width > 0 {
		l.titleW = min(l.titleW, max(width-rowIndent-2-durW, minTitle))
	}
	return l
}

// wrap breaks s into lines of at most w columns, at spaces where it can;
// with no width it is one line, whole.
func (l layout) wrap(s string, w int) []string {
	if l.width <= 0 || lipgloss.Width(s) <= w {
		return []string{s}
	}
	return textwrap.Lines(s, max(w, 1))
}

// note writes a reason or source under its row, styled line by line so
// that no line is padded.
func (l layout) note(b *strings.Builder, st lipgloss.Style, s string) {
	for _, line := range l.wrap(s, l.width-noteIndent) {
		b.WriteString(st.Render(line) + "\n")
	}
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}
