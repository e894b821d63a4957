package tablefmt

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/internal/redact"
	"github.com/mcpauth/mcpauth/internal/textwrap"
)

// Entry is one item of a List: its key (a server or probe URL) on a line of
// its own, then its fields, as many to a line as fit, indented under it.
type Entry struct {
	Key    string
	Fields []string
}

// Indent is how far a List entry's fields, or a Pairs value that moved
// under its label, sit to the right.
const Indent = "  "

// List renders entries within width columns (0: unlimited, so each entry's
// fields share one line). Fields give way: they move to the next line, and
// one too long for a line wraps. key fits a key to the width; nil keeps keys
// whole, as a cut URL cannot be copied: a key wider than the terminal is
// the one line the terminal wraps.
func List(entries []Entry, width int, key func(s string, w int) string) string {
	var b strings.Builder
	for _, e := range entries {
		k := redact.Line(e.Key)
		if key != nil && width > 0 {
			k = key(k, width)
		}
		b.WriteString(k + "\n")
		fields := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = redact.Line(f)
		}
		for _, line := range flow(fields, width-len(Indent)) {
			b.WriteString(Indent + line + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// flow puts fields on lines of at most w columns (w < 1: unlimited),
// separated by Gap, wrapping a field wider than a line.
func flow(fields []string, w int) []string {
	var lines []string
	line := ""
	for _, f := range fields {
		switch {
		case line == "":
		case w < 1 || lipgloss.Width(line+Gap+f) <= w:
			line += Gap + f
			continue
		default:
			lines = append(lines, line)
		}
		parts := []string{f}
		if w >= 1 {
			parts = textwrap.Lines(f, w)
		}
		lines = append(lines, parts[:len(parts)-1]...)
		line = parts[len(parts)-1]
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Pairs renders label and value rows, labels padded to the longest. A value
// that does not fit beside its label within width (0: unlimited) goes on
// the next line, indented: a URL whole if it fits there, else shortened in
// its host (PathURL); other text wrapped.
func Pairs(rows [][2]string, width int) string {
	lw := 0
	for _, r := range rows {
		lw = max(lw, lipgloss.Width(redact.Line(r[0])))
	}
	var b strings.Builder
	for _, r := range rows {
		label, value := redact.Line(r[0]), redact.Line(r[1])
		if width < 1 || lw+len(Gap)+lipgloss.Width(value) <= width {
			b.WriteString(label + strings.Repeat(" ", lw-lipgloss.Width(label)) + Gap + value + "\n")
			continue
		}
		b.WriteString(label + "\n")
		lines := []string{PathURL(value, width-len(Indent))}
		if !isURL(value) {
			lines = textwrap.Lines(value, width-len(Indent))
		}
		for _, l := range lines {
			b.WriteString(Indent + l + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func isURL(s string) bool { return strings.Contains(s, "://") && !strings.Contains(s, " ") }

// PathURL shortens s to w columns by cutting the middle of its host, so
// that the path, which tells discovery's probes of one server apart, stays
// whole; when the path alone leaves no room for a host, MiddleURL decides.
func PathURL(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	i := strings.Index(s, "://")
	if i < 0 {
		return MiddleURL(s, w)
	}
	head, rest := s[:i+3], s[i+3:]
	host, path := rest, ""
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		host, path = rest[:j], rest[j:]
	}
	hostW := w - lipgloss.Width(head) - lipgloss.Width(path)
	const minHost = 8 // a few characters each side of "…"
	if hostW < minHost {
		return MiddleURL(s, w)
	}
	r := []rune(host)
	keep := hostW - 1
	return head + textwrap.Take(r, keep-keep/2) + "…" + takeWidthFromEnd(r, keep/2) + path
}
