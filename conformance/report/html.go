package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
)

// WriteHTML writes the report as one self-contained HTML page (no scripts,
// styles inline, nothing fetched): the summary, on a failing run what
// failed it, the checks grouped by area
// and, under each check that did not pass, its reason and the HTTP
// exchanges that led to the verdict, secrets redacted.
func WriteHTML(w io.Writer, r *conformance.Report) error {
	if err := htmlReport().Execute(w, newHTMLView(r)); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

//go:embed report.html.tmpl
var htmlTemplate string

var htmlReport = sync.OnceValue(func() *template.Template { return template.Must(template.New("report").Parse(htmlTemplate)) }) // parsed on first use, not at start-up

type htmlView struct {
	Target   string
	Started  string
	Duration string
	Failed   bool
	Summary  conformance.Summary
	Areas    []htmlArea
	Stale    []string
	// Failures are the checks that fail the run, listed before everything
	// else so a failing run opens on what to fix.
	Failures []conformance.Result
}

type htmlArea struct {
	Name    string
	Summary conformance.Summary
	Results []htmlResult
}

type htmlResult struct {
	conformance.Result
	Mark     string
	Class    string
	Duration string
	Open     bool // a failure is shown unfolded
}

func newHTMLView(r *conformance.Report) htmlView {
	v := htmlView{Target: r.Target, Started: r.Started.UTC().Format(time.RFC3339), Duration: fmtDuration(r.Duration),
		Failed: r.Failed(), Summary: r.Summary(), Stale: r.Stale}
	for _, results := range byArea(r.Results) {
		a := htmlArea{Name: results[0].Area, Summary: (&conformance.Report{Results: results}).Summary()}
		for _, res := range results {
			mark, class := verdictMark(res)
			failed := res.Verdict == conformance.VerdictFail && !res.Expected
			a.Results = append(a.Results, htmlResult{Result: res, Mark: mark, Class: class, Duration: fmtDuration(res.Duration), Open: failed})
			if failed {
				v.Failures = append(v.Failures, res)
			}
		}
		v.Areas = append(v.Areas, a)
	}
	return v
}

// verdictMark is the symbol the text report uses, and a CSS class.
func verdictMark(res conformance.Result) (string, string) {
	switch {
	case res.Expected:
		return "x", "expected"
	case res.Verdict == conformance.VerdictPass:
		return "✓", "pass"
	case res.Verdict == conformance.VerdictFail:
		return "✗", "fail"
	case res.Verdict == conformance.VerdictWarn:
		return "!", "warn"
	case res.Verdict == conformance.VerdictInfo:
		return "i", "info"
	case res.Verdict == conformance.VerdictInconclusive:
		return "?", "inconclusive"
	case res.Verdict == conformance.VerdictBlocked:
		return "⊘", "blocked"
	}
	return "−", "skip"
}
