package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss/table"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

func writeOutputs(opts *Options, rep *Report) error {
	t := table.New().Headers("PATH", "REQ/S", "P50 MS", "P99 MS", "ERRORS", "RATIO", "TARGET")
	for _, s := range rep.Paths {
		t.Row(s.Name, fmt.Sprintf("%.0f", s.RPS), fmt.Sprintf("%.3f", s.P50ms), fmt.Sprintf("%.3f", s.P99ms),
			fmt.Sprint(s.Errors), fmt.Sprintf("%.2f", s.Ratio), targetText(s))
	}
	fmt.Fprintf(opts.IO.Out, "medians over %d rounds, %d workers, %s per path, %d cores\n%s\n", rep.Rounds, rep.Concurrency, rep.Duration, rep.Cores, t.Render())
	if opts.JSON != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFile(opts, opts.JSON, append(b, '\n')); err != nil {
			return err
		}
	}
	if opts.Markdown != "" {
		md := markdown(rep, opts)
		// Hand-written notes below the marker survive regeneration.
		if old, err := os.ReadFile(opts.Markdown); err == nil {
			if i := bytes.Index(old, []byte(manualMarker)); i >= 0 {
				md += "\n" + string(old[i:])
			}
		}
		if err := writeFile(opts, opts.Markdown, []byte(md)); err != nil {
			return err
		}
	}
	if opts.Chart != "" {
		var buf bytes.Buffer
		if err := png.Encode(&buf, chart(rep)); err != nil {
			return err
		}
		if err := writeFile(opts, opts.Chart, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// manualMarker starts the part of BENCHMARKS.md that is kept as is.
const manualMarker = "<!-- kept by mcpauth bench: notes below are written by hand -->"

func writeFile(opts *Options, name string, b []byte) error {
	if name == "-" {
		_, err := opts.IO.Out.Write(b)
		return err
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
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

func markdown(rep *Report, opts *Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\nWhat authentication costs per request on the reference server, as a ratio to a bare `net/http` handler serving the same ping JSON on the same kind of loopback listener, measured in the same run. Only the ratios are meant to be compared across machines.\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d cores (load generator and server share them)\n- command: `mcpauth bench --rounds %d --duration %s --concurrency %d --markdown BENCHMARKS.md --chart BENCHMARKS.png`\n- store: SQLite (WAL) in a temp dir; rate limits off\n- load: closed loop, %d workers on keep-alive connections; medians over %d rounds\n\n",
		rep.Machine, rep.Cores, opts.Rounds, opts.Duration, opts.Concurrency, opts.Concurrency, opts.Rounds)
	b.WriteString("| path | req/s | p50 ms | p99 ms | errors | ratio to baseline | target |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range rep.Paths {
		fmt.Fprintf(&b, "| %s | %.0f | %.3f | %.3f | %d | %.2f | %s |\n", s.Name, s.RPS, s.P50ms, s.P99ms, s.Errors, s.Ratio, targetText(s))
	}
	b.WriteString("\n![ratios to the bare baseline](BENCHMARKS.png)\n\nRegenerate both files with:\n\n```sh\ngo run ./cmd/mcpauth bench --markdown BENCHMARKS.md --chart BENCHMARKS.png\n```\n")
	return b.String()
}

// chart draws a horizontal bar per path: its ratio to the baseline, with a
// tick at its target.
func chart(rep *Report) image.Image {
	const w, rowH, left, top = 900, 44, 250, 50
	h := top + rowH*len(rep.Paths) + 40
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	text := func(x, y int, s string, c color.Color) {
		d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	text(10, 25, fmt.Sprintf("mcpauth bench: ratio of requests/s to the bare baseline (medians of %d rounds, %d cores)", rep.Rounds, rep.Cores), color.Black)
	scale := float64(w-left-60) / 1.1
	x1 := func(r float64) int { return left + int(r*scale) }
	for i, s := range rep.Paths {
		y := top + i*rowH
		text(10, y+22, s.Name, color.Black)
		barColor := color.RGBA{0x24, 0x54, 0xd6, 0xff}
		if s.MeetsGoal != nil && !*s.MeetsGoal {
			barColor = color.RGBA{0xd9, 0x7c, 0x06, 0xff}
		}
		r := s.Ratio
		if r > 1.1 {
			r = 1.1
		}
		draw.Draw(img, image.Rect(left, y+8, x1(r), y+30), &image.Uniform{barColor}, image.Point{}, draw.Src)
		text(x1(r)+6, y+24, fmt.Sprintf("%.2f", s.Ratio), color.Black)
		if s.Target > 0 {
			tx := x1(s.Target)
			draw.Draw(img, image.Rect(tx-1, y+3, tx+1, y+35), &image.Uniform{color.RGBA{0xb4, 0x23, 0x18, 0xff}}, image.Point{}, draw.Src)
		}
	}
	axisY := top + rowH*len(rep.Paths) + 5
	draw.Draw(img, image.Rect(left, axisY, x1(1.1), axisY+1), &image.Uniform{color.Gray{0x88}}, image.Point{}, draw.Src)
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 1.0} {
		text(x1(r)-10, axisY+18, fmt.Sprintf("%.2f", r), color.Gray{0x44})
	}
	text(w-230, axisY+32, "red tick: target ratio", color.RGBA{0xb4, 0x23, 0x18, 0xff})
	return img
}
