package conformance

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TextOptions tune the human-readable report.
type TextOptions struct {
	Color   bool // false: plain text (NO_COLOR, pipes, CI logs)
	Verbose bool // also show the source of each check
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
// ✓ pass, ✗ fail, ! warning (a Should check failed), − skipped.
func (r *Report) WriteText(w io.Writer, opts TextOptions) error {
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
	titleW := 0
	for _, res := range r.Results {
		titleW = max(titleW, len([]rune(res.Title)))
	}
	titleW = min(titleW, 72)

	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", area.Render("mcpauth conformance"), r.Target)
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
		case res.Verdict == VerdictPass:
			mark = pass.Render("✓")
		case res.Verdict == VerdictFail:
			mark = fail.Render("✗")
		case res.Verdict == VerdictWarn:
			mark = warn.Render("!")
		default:
			mark = skip.Render("−")
		}
		title := truncate(res.Title, titleW)
		pad := strings.Repeat(" ", titleW-len([]rune(title)))
		fmt.Fprintf(&b, "  %s %-9s %s%s  %s\n", mark, res.ID, title, pad, faint.Render(fmtDuration(res.Duration)))
		note := res.Reason
		if res.Expected {
			note = "expected failure (baseline): " + note
		}
		if note != "" && res.Verdict != VerdictPass {
			st := reason
			switch {
			case res.Expected || res.Verdict == VerdictSkip:
				st = st.Inherit(skip)
			case res.Verdict == VerdictFail:
				st = st.Inherit(fail.UnsetBold())
			case res.Verdict == VerdictWarn:
				st = st.Inherit(warn)
			}
			b.WriteString(st.Render(note) + "\n")
		}
		if opts.Verbose {
			b.WriteString(reason.Inherit(faint).Render(res.Source) + "\n")
		}
	}
	if len(r.Stale) > 0 {
		fmt.Fprintf(&b, "\n%s\n", fail.Render("stale baseline"))
		for _, s := range r.Stale {
			fmt.Fprintf(&b, "  %s %s\n", fail.Render("✗"), s)
		}
	}
	s := r.Summary()
	verdict := pass.Render("PASS")
	if r.Failed() {
		verdict = fail.Render("FAIL")
	}
	fmt.Fprintf(&b, "\n%s  %d passed, %d failed, %d warned, %d skipped in %s\n",
		verdict, s.Pass, s.Fail, s.Warn, s.Skip, fmtDuration(r.Duration))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
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
