package conformance

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sync"
	"time"
)

// WriteHTML writes the report as one self-contained HTML page (no scripts,
// styles inline, nothing fetched): the summary, the checks grouped by area
// and, under each check that did not pass, its reason and the HTTP
// exchanges that led to the verdict, secrets redacted.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := htmlReport().Execute(w, r.htmlView()); err != nil {
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
	Summary  Summary
	Areas    []htmlArea
	Stale    []string
}

type htmlArea struct {
	Name    string
	Summary Summary
	Results []htmlResult
}

type htmlResult struct {
	Result
	Mark     string
	Class    string
	Duration string
	Open     bool // a failure is shown unfolded
}

func (r *Report) htmlView() htmlView {
	v := htmlView{Target: r.Target, Started: r.Started.UTC().Format(time.RFC3339), Duration: fmtDuration(r.Duration),
		Failed: r.Failed(), Summary: r.Summary(), Stale: r.Stale}
	for _, results := range byArea(r.Results) {
		a := htmlArea{Name: results[0].Area}
		for _, res := range results {
			a.Summary.add(res.Verdict)
			mark, class := verdictMark(res)
			a.Results = append(a.Results, htmlResult{Result: res, Mark: mark, Class: class, Duration: fmtDuration(res.Duration),
				Open: res.Verdict == VerdictFail && !res.Expected})
		}
		v.Areas = append(v.Areas, a)
	}
	return v
}

// verdictMark is the symbol the text report uses, and a CSS class.
func verdictMark(res Result) (string, string) {
	switch {
	case res.Expected:
		return "x", "expected"
	case res.Verdict == VerdictPass:
		return "✓", "pass"
	case res.Verdict == VerdictFail:
		return "✗", "fail"
	case res.Verdict == VerdictWarn:
		return "!", "warn"
	case res.Verdict == VerdictInfo:
		return "i", "info"
	case res.Verdict == VerdictInconclusive:
		return "?", "inconclusive"
	case res.Verdict == VerdictBlocked:
		return "⊘", "blocked"
	}
	return "−", "skip"
}
