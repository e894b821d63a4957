// Package textwrap breaks text into lines of a terminal's width, for the
// CLI's tables and lists and the conformance report alike.
package textwrap

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Lines breaks s at spaces into lines of at most w columns; a word longer
// than w is cut into pieces.
func Lines(s string, w int) []string { return wrap(s, w, true) }

// Words breaks s at spaces into lines of at most w columns, like Lines,
// but never cuts a word: one longer than w (a path, a URL) stays whole on a
// line of its own, so it can still be copied.
func Words(s string, w int) []string { return wrap(s, w, false) }

func wrap(s string, w int, cut bool) []string {
	if lipgloss.Width(s) <= w || w < 1 {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for cut && lipgloss.Width(word) > w {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			piece := Take([]rune(word), w)
			if piece == "" { // a wide rune in a one-column cell
				piece = string([]rune(word)[:1])
			}
			lines, word = append(lines, piece), word[len(piece):]
		}
		switch {
		case line == "":
			line = word
		case lipgloss.Width(line)+1+lipgloss.Width(word) <= w:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Take is the longest prefix of r at most w columns wide.
func Take(r []rune, w int) string {
	n, i := 0, 0
	for ; i < len(r); i++ {
		rw := lipgloss.Width(string(r[i]))
		if n+rw > w {
			break
		}
		n += rw
	}
	return string(r[:i])
}
