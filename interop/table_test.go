package interop

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The "Tested with" tables in README.md (the cells) and docs/interop.md
// (the cells and every cell's note) are this test's output: each cell is
// the result of one subtest of TestLab, so no row claims what no test
// measured. TestLab compares both pages with what it measured when every
// cell ran; `go test ./interop -run TestLab -update` rewrites them.
var update = flag.Bool("update", false, "rewrite the Tested with tables of README.md and docs/interop.md from this run")

const (
	tableBegin = "<!-- interop table: written by go test ./interop -run TestLab -update -->"
	tableEnd   = "<!-- end of interop table -->"
)

// outcome is one cell: a pass, a flow the other side does not offer, or a
// known limitation (the subtest asserts it still fails as described).
type outcome struct {
	kind string // "pass", "n/a", "known"
	note string // why, with the RFC or spec text where a quirk was adapted to
}

func pass(note string) outcome  { return outcome{"pass", note} }
func na(note string) outcome    { return outcome{"n/a", note} }
func known(note string) outcome { return outcome{"known", note} }

// grid is one table: components (rows) by flows (columns).
type grid struct {
	title string
	flows []string
	mu    sync.Mutex
	rows  []*gridRow
}

type gridRow struct {
	name, version string
	cells         map[string]outcome
	failed        map[string]bool
}

func (g *grid) row(name, version string) *gridRow {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := &gridRow{name: name, version: version, cells: map[string]outcome{}, failed: map[string]bool{}}
	g.rows = append(g.rows, r)
	return r
}

// flow runs one cell's subtest and records its outcome.
func (g *grid) flow(t *testing.T, r *gridRow, flow string, fn func(t *testing.T) outcome) {
	t.Helper()
	if !slices.Contains(g.flows, flow) {
		t.Fatalf("flow %q is no column of %q", flow, g.title)
	}
	var got outcome
	ok := t.Run(flow, func(t *testing.T) { got = fn(t) })
	g.mu.Lock()
	defer g.mu.Unlock()
	if !ok || got.kind == "" {
		r.failed[flow] = true
		return
	}
	r.cells[flow] = got
}

// complete reports whether every cell of every row has a result.
func (g *grid) complete() bool {
	for _, r := range g.rows {
		if len(r.cells)+len(r.failed) < len(g.flows) || len(r.failed) > 0 {
			return false
		}
	}
	return len(g.rows) > 0
}

// markdown renders the grid, then, with notes, its notes numbered in
// order (README.md has the cells alone, docs/interop.md both).
func (g *grid) markdown(withNotes bool) string {
	var b, notes strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n| | version | %s |\n|---|---|%s\n", g.title, strings.Join(g.flows, " | "), strings.Repeat("---|", len(g.flows)))
	rows := slices.Clone(g.rows)
	slices.SortStableFunc(rows, func(a, b *gridRow) int { return strings.Compare(a.name, b.name) })
	n := 0
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |", r.name, r.version)
		for _, f := range g.flows {
			c := r.cells[f]
			mark := map[string]string{"pass": "yes", "n/a": "—", "known": "**no**"}[c.kind]
			if c.note != "" && withNotes {
				n++
				mark += fmt.Sprintf(" [%d]", n)
				fmt.Fprintf(&notes, "%d. %s, %s: %s\n", n, r.name, f, c.note)
			}
			fmt.Fprintf(&b, " %s |", mark)
		}
		b.WriteString("\n")
	}
	if notes.Len() > 0 {
		b.WriteString("\n" + notes.String())
	}
	return b.String()
}

// checkTables compares README.md's and docs/interop.md's tables with the
// grids, or rewrites them with -update.
func checkTables(t *testing.T, grids ...*grid) {
	t.Helper()
	for _, page := range []struct {
		path      string
		withNotes bool
	}{{"README.md", false}, {filepath.Join("docs", "interop.md"), true}} {
		parts := make([]string, len(grids))
		for i, g := range grids {
			parts[i] = g.markdown(page.withNotes)
		}
		checkTable(t, filepath.Join("..", page.path), tableBegin+"\n"+strings.Join(parts, "\n")+tableEnd)
	}
}

// checkTable compares the table between the markers of the page at path
// with want, or rewrites it with -update.
func checkTable(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i, j := strings.Index(page, tableBegin), strings.Index(page, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q around the Tested with table", path, tableBegin, tableEnd)
	}
	if page[i:j+len(tableEnd)] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(page[:i]+want+page[j+len(tableEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the Tested with table in %s", path)
		return
	}
	t.Errorf("%s's Tested with table is not what this run measured (go test ./interop -run TestLab -update rewrites it); measured:\n%s", path, want)
}
