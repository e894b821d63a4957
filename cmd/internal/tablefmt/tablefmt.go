// Package tablefmt lays out the CLI's tables within a terminal's width:
// long URLs lose their middle, long text wraps, and no line is wider than
// the width: plain aligned text, on a terminal as on a pipe. Every cell,
// key and value goes through the printing rule (redact): tables show what
// servers said, and commands that print through them inherit the rule.
package tablefmt

import (
	"net/url"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/internal/redact"
	"github.com/mcpauth/mcpauth/internal/textwrap"
)

// Kind says how a column gives up width.
type Kind int

const (
	Text  Kind = iota // wraps at spaces
	URL               // keeps scheme://host and the path's end, "…" between; other text wraps
	Fixed             // shrinks last, cut at the end
)

// Column is a column's header ("" for every column: no header row) and kind.
type Column struct {
	Header string
	Kind   Kind
}

// Col is a Column.
func Col(header string, k Kind) Column { return Column{Header: header, Kind: k} }

// Table is what to render.
type Table struct {
	Columns []Column
	Rows    [][]string
	// HeaderStyle styles the padded header cells (bold on a terminal, say).
	HeaderStyle func(string) string
}

// Gap separates plain columns.
const Gap = "  "

// Floors of the first shrinking pass: a URL column keeps room for a
// scheme and host, a text column for a word; only then do all columns,
// fixed ones too, shrink to one character.
const (
	minURL  = 22
	minText = 8
)

// Render lays t out in width columns (0: unlimited), the columns separated
// by Gap. A width narrower than one character per column plus separators
// cannot be met.
func Render(t Table, width int) string {
	n := len(t.Columns)
	if n == 0 {
		return ""
	}
	overhead := len(Gap) * (n - 1)
	widths := natural(t)
	if width > 0 {
		fit(t.Columns, widths, width-overhead)
	}
	header := t.hasHeader()
	cells := make([][][]string, 0, len(t.Rows)+1) // row, column, lines
	if header {
		row := make([][]string, n)
		for i, c := range t.Columns {
			row[i] = []string{cutEnd(c.Header, widths[i])}
		}
		cells = append(cells, row)
	}
	for _, r := range t.Rows {
		row := make([][]string, n)
		for i := range t.Columns {
			row[i] = fitCell(cell(r, i), t.Columns[i].Kind, widths[i])
		}
		cells = append(cells, row)
	}
	return plain(cells, widths, header, t.HeaderStyle)
}

func (t Table) hasHeader() bool {
	for _, c := range t.Columns {
		if c.Header != "" {
			return true
		}
	}
	return false
}

// cell is a row's value in column i, made printable: cells quote servers.
func cell(r []string, i int) string {
	if i < len(r) {
		return redact.Text(r[i])
	}
	return ""
}

func natural(t Table) []int {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = lipgloss.Width(c.Header)
		for _, r := range t.Rows {
			w[i] = max(w[i], lipgloss.Width(cell(r, i)))
		}
	}
	return w
}

// fit narrows the widest column, one character at a time, until the total
// fits budget: URL and text columns down to their floors first, then any
// column down to one character.
func fit(cols []Column, w []int, budget int) {
	floors := []func(Column) int{
		func(c Column) int {
			switch c.Kind {
			case URL:
				return minURL
			case Text:
				return minText
			}
			return 1 << 30
		},
		func(Column) int { return 1 },
	}
	for _, floor := range floors {
		for sum(w) > budget {
			widest := -1
			for i, c := range cols {
				if w[i] > floor(c) && (widest < 0 || w[i] > w[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			w[widest]--
		}
	}
}

func sum(w []int) int {
	s := 0
	for _, v := range w {
		s += v
	}
	return s
}

func fitCell(s string, k Kind, w int) []string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		switch k {
		case URL:
			if strings.Contains(line, "://") && !strings.Contains(line, " ") {
				lines = append(lines, MiddleURL(line, w))
				break
			}
			lines = append(lines, textwrap.Lines(line, w)...) // a note among URLs
		case Text:
			lines = append(lines, textwrap.Lines(line, w)...)
		default:
			lines = append(lines, cutEnd(line, w))
		}
	}
	return lines
}

func plain(cells [][][]string, w []int, header bool, style func(string) string) string {
	var b strings.Builder
	for r, row := range cells {
		height := 0
		for _, lines := range row {
			height = max(height, len(lines))
		}
		for l := range height {
			var line strings.Builder
			for i, lines := range row {
				s := ""
				if l < len(lines) {
					s = lines[l]
				}
				s += strings.Repeat(" ", w[i]-lipgloss.Width(s))
				if r == 0 && header && style != nil {
					s = style(s)
				}
				if i > 0 {
					line.WriteString(Gap)
				}
				line.WriteString(s)
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Widest is the width of out's widest line.
func Widest(out string) int {
	w := 0
	for _, line := range strings.Split(out, "\n") {
		w = max(w, lipgloss.Width(line))
	}
	return w
}

// MiddleURL shortens s to w columns with "…" in the middle, keeping
// scheme://host whole when it leaves a third for the path's end, and as
// much of the path's end as fits.
func MiddleURL(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 1 {
		return cutEnd(s, w)
	}
	avail := w - 1
	head := avail - avail/2
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		if o := len(u.Scheme) + len("://") + len(u.Host); o <= avail*2/3 {
			head = o
		}
	}
	r := []rune(s)
	return textwrap.Take(r, head) + "…" + takeWidthFromEnd(r, avail-head)
}

// cutEnd shortens s to w columns, ending with "…" when cut.
func cutEnd(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 1 {
		return textwrap.Take([]rune(s), w)
	}
	return textwrap.Take([]rune(s), w-1) + "…"
}

func takeWidthFromEnd(r []rune, w int) string {
	n, i := 0, len(r)
	for ; i > 0; i-- {
		rw := lipgloss.Width(string(r[i-1]))
		if n+rw > w {
			break
		}
		n += rw
	}
	return string(r[i:])
}
