package report

// The HTML report in a real headless Chromium (server/browsertest): it fits
// a phone, and a failing run opens on its failures. Screenshots are kept
// under browsertest.ArtifactsDir (CI keeps them).

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/testenv"
	"github.com/mcpauth/mcpauth/server/browsertest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// openHTMLReport writes r as HTML and opens it in a fresh Chromium,
// emulating a width x height phone when width > 0.
func openHTMLReport(t *testing.T, r *conformance.Report, width, height int64) context.Context {
	t.Helper()
	ctx := browsertest.Start(t, browsertest.Options{})
	if width > 0 {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
			t.Fatalf("emulating a phone: %v", err)
		}
	}
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	werr := WriteHTML(f, r)
	if err := f.Close(); werr != nil || err != nil {
		t.Fatalf("writing the report: %v %v", werr, err)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatalf("opening the report: %v", err)
	}
	return ctx
}

// chrReportPhoneJS measures the page against the screen, and the area
// table's box and the last column's header.
const chrReportPhoneJS = `(() => {
  const box = document.querySelector(".table-scroll").getBoundingClientRect();
  const ths = document.querySelectorAll("table.summary th");
  const last = ths[ths.length - 1];
  const scroller = document.querySelector(".table-scroll");
  scroller.scrollLeft = scroller.scrollWidth;
  const lastAfter = last.getBoundingClientRect();
  return {innerWidth: innerWidth, scrollWidth: document.documentElement.scrollWidth,
    boxLeft: box.left, boxRight: box.right, lastText: last.textContent, lastLeft: lastAfter.left, lastRight: lastAfter.right};
})()`

type chrReportPhone struct {
	InnerWidth  float64 `json:"innerWidth"`
	ScrollWidth float64 `json:"scrollWidth"`
	BoxLeft     float64 `json:"boxLeft"`
	BoxRight    float64 `json:"boxRight"`
	LastText    string  `json:"lastText"`
	LastLeft    float64 `json:"lastLeft"`
	LastRight   float64 `json:"lastRight"`
}

// On a 375 px phone the page is no wider than the screen (a mobile browser
// would zoom out, or cut the table off), and the area table's last column
// can be brought into view inside its own box.
func TestHTMLReportFitsAPhone(t *testing.T) {
	ctx := openHTMLReport(t, sampleReport(), 375, 667)
	browsertest.Screenshot(t, ctx, "report-phone")
	m, err := chromedp.Run(ctx, chromedp.Evaluate[chrReportPhone](chrReportPhoneJS))
	if err != nil {
		t.Fatalf("measuring: %v", err)
	}
	if m.InnerWidth != 375 || m.ScrollWidth > 375 {
		t.Errorf("the page is %v px wide in a %v px viewport; want it within a 375 px phone", m.ScrollWidth, m.InnerWidth)
	}
	if m.BoxLeft < 0 || m.BoxRight > 375 {
		t.Errorf("the area table's box spans %v..%v px; want it on the screen", m.BoxLeft, m.BoxRight)
	}
	if m.LastText != "skip" || m.LastLeft < m.BoxLeft || m.LastRight > m.BoxRight+0.5 {
		t.Errorf("the last column %q spans %v..%v px once scrolled; want it inside the table's box %v..%v", m.LastText, m.LastLeft, m.LastRight, m.BoxLeft, m.BoxRight)
	}
}

// chrReportOrderJS lists, in page order, what a reader meets: the failure
// list's check ids, then where the area table and the first check are.
const chrReportOrderJS = `(() => {
  const all = [...document.querySelectorAll("#failures, #failures li a.id, #stale, table.summary, .check")];
  return all.map(el => el.id || (el.classList.contains("id") ? "failure:" + el.textContent : el.tagName === "TABLE" ? "table" : "check:" + el.id));
})()`

// A failing run lists its failures (the checks that fail it, not the
// expected failures of the baseline) and the stale baseline first, each
// linked to its check, before the area table and the checks by area. A
// passing run has no such list.
func TestHTMLReportListsFailuresFirst(t *testing.T) {
	ctx := openHTMLReport(t, sampleReport(), 0, 0)
	browsertest.Screenshot(t, ctx, "report-failing")
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](chrReportOrderJS))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	want := []string{"failures", "failure:REG-11", "stale", "table"}
	if len(order) < len(want) || !slices.Equal(order[:len(want)], want) {
		t.Errorf("page order %q; want it to begin %q", order, want)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#failures a.id").getAttribute("href")`))
	if err != nil || href != "#REG-11" {
		t.Errorf("the failure links to %q (%v); want #REG-11", href, err)
	}

	passing := sampleReport()
	passing.Stale = nil
	passing.Results = slices.DeleteFunc(passing.Results, func(r conformance.Result) bool {
		return r.Verdict == conformance.VerdictFail && !r.Expected
	})
	ctx = openHTMLReport(t, passing, 0, 0)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#failures").length`))
	if err != nil || n != 0 {
		t.Errorf("a passing run shows %d failure list(s) (%v); want none", n, err)
	}
}
