package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss/table"
)

// WriteTable writes the medians as a table.
func (r *Report) WriteTable(w io.Writer) error {
	t := table.New().Headers("PATH", "REQ/S", "P50 MS", "P99 MS", "ERRORS", "RATIO", "TARGET")
	for _, s := range r.Paths {
		t.Row(s.Name, fmt.Sprintf("%.0f", s.RPS), fmt.Sprintf("%.3f", s.P50ms), fmt.Sprintf("%.3f", s.P99ms),
			fmt.Sprint(s.Errors), fmt.Sprintf("%.2f", s.Ratio), targetText(s))
	}
	_, err := fmt.Fprintf(w, "%s: medians over %d rounds, %d workers, %s per path, %d cores\n%s\n",
		r.Mode, r.Rounds, r.Concurrency, r.Duration, r.Cores, t.Render())
	return err
}

// JSON is the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the report: %w", err)
	}
	return append(b, '\n'), nil
}

// JSONAll is the reports of every mode as indented JSON.
func JSONAll(reps []*Report) ([]byte, error) {
	b, err := json.MarshalIndent(struct {
		Modes []*Report `json:"modes"`
	}{reps}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the report: %w", err)
	}
	return append(b, '\n'), nil
}

// ManualMarker starts the part of BENCHMARKS.md that is kept as is.
const ManualMarker = "<!-- kept by mcpauth bench: notes below are written by hand -->"

// Markdown renders a BENCHMARKS.md: the generated part, linking chart when
// not empty, then the hand-written part of old (from ManualMarker on), so
// notes survive regeneration. The reports of other modes measured in the
// same run follow the main table, each as its own table.
func (r *Report) Markdown(chart string, old []byte, others ...*Report) []byte {
	var b strings.Builder
	command := fmt.Sprintf("mcpauth bench --rounds %d --duration %s --concurrency %d --markdown BENCHMARKS.md", r.Rounds, r.Duration, r.Concurrency)
	if chart != "" {
		command += " --chart " + chart
	}
	b.WriteString("# Benchmarks\n\nWhat authentication costs per request on the reference server, as a ratio to a bare `net/http` handler serving the same ping JSON on the same kind of loopback listener, measured in 250 ms slices alternating with each path's own. Only the ratios are meant to be compared across machines.\n\n")
	if len(r.Scale) > 0 {
		ns := make([]string, len(r.Scale))
		for i, sc := range r.Scale {
			ns[i] = fmt.Sprint(sc.Flows)
		}
		command += fmt.Sprintf(" --device-flows %s --flow-duration %s", strings.Join(ns, ","), r.Scale[0].Duration)
	}
	stores := "SQLite (WAL) in a temp dir"
	switch r.SQLiteSync {
	case "normal":
		stores = "SQLite (WAL, `synchronous=NORMAL`, as `mcpauth serve` runs by default) in a temp dir"
	case "full":
		stores = "SQLite (WAL, `synchronous=FULL`: `mcpauth serve --sqlite-sync full`) in a temp dir"
		command += " --sqlite-sync full"
	}
	// A PostgreSQL run of the same mode becomes columns of the main table.
	var pg *Report
	if len(others) > 0 && others[0].Store == "PostgreSQL" && others[0].Mode == r.Mode && len(others[0].Paths) == len(r.Paths) {
		pg, others = others[0], others[1:]
		command = "scripts/with-postgres.sh sh -c 'go run ./cmd/" + command + ` --postgres "$MCPAUTH_TEST_POSTGRES_URL"'`
	} else {
		command = "go run ./cmd/" + command
	}
	if pg != nil {
		stores += "; PostgreSQL (the PostgreSQL columns: a local cluster from `scripts/with-postgres.sh`, same machine, one instance, credentials not cached)"
	}
	fmt.Fprintf(&b, "- machine: %s, %d cores (%s)\n- mode: %s\n- command: `%s`\n- store: %s; rate limits off\n- load: closed loop, %d workers on keep-alive connections; medians over %d rounds\n\n",
		r.Machine, r.Cores, sharing(r), modeText(r.Mode), command, stores, r.Concurrency, r.Rounds)
	writeMarkdownTable(&b, r, pg)
	if chart != "" {
		fmt.Fprintf(&b, "\n![ratios to the bare baseline](%s)\n", chart)
	}
	for _, o := range others {
		fmt.Fprintf(&b, "\n### %s, same run\n\n%s.\n\n", o.Mode, modeText(o.Mode))
		writeMarkdownTable(&b, o, nil)
	}
	writeScale(&b, r.Scale)
	fmt.Fprintf(&b, "\nRegenerate with:\n\n```sh\n%s\n```\n", command)
	if i := bytes.Index(old, []byte(ManualMarker)); i >= 0 {
		b.WriteString("\n")
		b.Write(old[i:])
	}
	return []byte(b.String())
}

// writeMarkdownTable writes r's paths, and pg's beside them when not nil
// (the same paths, in the same order, on PostgreSQL).
func writeMarkdownTable(b *strings.Builder, r, pg *Report) {
	b.WriteString("| path | req/s | p50 ms | p99 ms | errors | ratio to baseline | target |")
	if pg != nil {
		b.WriteString(" PostgreSQL req/s | p50 ms | p99 ms | errors | ratio | target |\n|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n")
	} else {
		b.WriteString("\n|---|---:|---:|---:|---:|---:|---|\n")
	}
	for i, s := range r.Paths {
		fmt.Fprintf(b, "| %s | %.0f | %.3f | %.3f | %d | %.2f | %s |", s.Name, s.RPS, s.P50ms, s.P99ms, s.Errors, s.Ratio, targetText(s))
		if pg != nil {
			p := pg.Paths[i]
			fmt.Fprintf(b, " %.0f | %.3f | %.3f | %d | %.2f | %s |", p.RPS, p.P50ms, p.P99ms, p.Errors, p.Ratio, targetText(p))
		}
		b.WriteString("\n")
	}
}

func modeText(m Mode) string {
	if m == InProcess {
		return "in-process: the baseline, the reference server and the load generator share one Go runtime"
	}
	return "out-of-process: the bare baseline and the reference server (`mcpauth serve`, logging as deployed) each run as a child process, the load generator in its own"
}

func sharing(r *Report) string {
	if r.Pinning != "" {
		return r.Pinning
	}
	return "load generator and servers share them"
}

func targetText(s Summary) string {
	switch {
	case s.MeetsGoal == nil:
		return ""
	case *s.MeetsGoal:
		return fmt.Sprintf("≥ %.2f ✓", s.Target)
	}
	return fmt.Sprintf("≥ %.2f ✗", s.Target)
}

// SVG draws a horizontal bar per path: its ratio to the baseline, with a red
// tick at its target. Plain SVG text, so the chart needs no font or image
// library and diffs as text.
func (r *Report) SVG() []byte {
	const w, rowH, left, top, maxRatio = 900, 44, 250, 50, 1.1
	h := top + rowH*len(r.Paths) + 40
	scale := float64(w-left-60) / maxRatio
	x := func(ratio float64) float64 { return left + min(ratio, maxRatio)*scale }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="13">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", w, h)
	text := func(x, y float64, fill, anchor, s string) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s" text-anchor="%s">%s</text>`+"\n", x, y, fill, anchor, html.EscapeString(s))
	}
	text(10, 25, "#000", "start", fmt.Sprintf("mcpauth bench, %s: ratio of requests/s to the bare baseline (medians of %d rounds, %d cores)", r.Mode, r.Rounds, r.Cores))
	for i, s := range r.Paths {
		y := float64(top + i*rowH)
		text(10, y+22, "#000", "start", s.Name)
		fill := "#2454d6"
		if s.MeetsGoal != nil && !*s.MeetsGoal {
			fill = "#d97c06"
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%.0f" width="%.1f" height="22" fill="%s"/>`+"\n", left, y+8, x(s.Ratio)-left, fill)
		text(x(s.Ratio)+6, y+24, "#000", "start", fmt.Sprintf("%.2f", s.Ratio))
		if s.Target > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="2" height="32" fill="#b42318"/>`+"\n", x(s.Target)-1, y+3)
		}
	}
	axisY := float64(top + rowH*len(r.Paths) + 5)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#888"/>`+"\n", left, axisY, x(maxRatio), axisY)
	for _, t := range []float64{0, 0.25, 0.5, 0.75, 1.0} {
		text(x(t), axisY+18, "#444", "middle", fmt.Sprintf("%.2f", t))
	}
	text(w-10, axisY+32, "#b42318", "end", "red tick: target ratio")
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// writeScale writes the scale mode's table, if it ran.
func writeScale(b *strings.Builder, rs []ScaleResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Device flows at scale, same run\n\n`mcpauth serve` on SQLite as a child process; N device flows pending at once, each polling the token endpoint at the interval the server gives plus up to 10 %% jitter, for %s, over one shared HTTP transport from 127.0.0.1; serve runs with `--limits %s` (from one address the per-IP device code limit would refuse all but the first few flows). RSS is the child's VmRSS: idle after start-up, and the highest sample (every 250 ms) while the flows were created and polled. Targets at 10,000 flows: p99 < 50 ms, RSS < 150 MiB.\n\n", rs[0].Duration, ScaleLimits)
	b.WriteString("| flows | polls | polls/s | p50 ms | p99 ms | errors | RSS idle MiB | RSS peak MiB | MiB per 1,000 flows |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(b, "| %d | %d | %.0f | %.3f | %.3f | %d | %.1f | %.1f | %.2f |\n", r.Flows, r.Polls, r.PollRate, r.P50ms, r.P99ms, r.Errors,
			r.RSSIdleMiB, r.RSSPeakMiB, (r.RSSPeakMiB-r.RSSIdleMiB)/float64(max(r.Flows, 1))*1000)
	}
}
