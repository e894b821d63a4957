package redact

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The printing rule for text a server or a token chose: its control and
// format characters are shown as escapes (\x1b, \u202e) instead of being
// obeyed, so it cannot set the window title, write the clipboard (OSC 52),
// clear the screen, hide text, move the cursor back over what came before
// or reverse what follows; and it is cut, ending in "…", so that one value
// cannot flood the screen. Three sizes:
const (
	// MaxField bounds one value: a name, an id, a code, a scope, a URL
	// shown in a sentence.
	MaxField = 200
	// MaxText bounds a message that quotes values (an error, a check's
	// detail, a log line), a table cell, or a URL to be copied whole.
	MaxText = 4000
)

// Ellipsis ends a cut value.
const Ellipsis = "…"

// Field is one value for one line: every control and format character
// escaped, newline and tab too; at most MaxField runes.
func Field(s string) string { return Clean(s, MaxField, false) }

// Line is a long value or a table cell for one line: as Field, at most
// MaxText runes.
func Line(s string) string { return Clean(s, MaxText, false) }

// Text is a message: control and format characters escaped but newline
// and tab; at most MaxText runes.
func Text(s string) string { return Clean(s, MaxText, true) }

// Printable escapes s as Text does but never cuts it: for the --debug
// trace, which bounds bodies itself.
func Printable(s string) string { return Clean(s, math.MaxInt, true) }

// Clean is the printing rule: s with every Unsafe rune escaped (newline
// and tab kept when lines), cut to at most limit runes, "…" included, when
// longer; an escape is never split. Text within the limit and without
// unsafe runes comes back unchanged.
func Clean(s string, limit int, lines bool) string {
	if limit < 1 {
		return ""
	}
	unsafe := func(r rune) bool { return Unsafe(r) && !(lines && (r == '\n' || r == '\t')) }
	if !strings.ContainsFunc(s, unsafe) && utf8.RuneCountInString(s) <= limit {
		return s
	}
	room, cut := limit, escapedLen(s, unsafe, limit) > limit
	if cut {
		room -= utf8.RuneCountInString(Ellipsis)
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		piece := string(r)
		if unsafe(r) {
			piece = escape(r)
		}
		w := utf8.RuneCountInString(piece)
		if n+w > room {
			break
		}
		b.WriteString(piece)
		n += w
	}
	if cut {
		b.WriteString(Ellipsis)
	}
	return b.String()
}

// escapedLen is how many runes s escaped has, counting no further than
// just past limit.
func escapedLen(s string, unsafe func(rune) bool, limit int) int {
	n := 0
	for _, r := range s {
		if unsafe(r) {
			n += len(escape(r))
		} else {
			n++
		}
		if n > limit {
			break
		}
	}
	return n
}

// escape writes r as Go would in a string literal, in ASCII.
func escape(r rune) string {
	switch {
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// Unsafe reports a rune a terminal may obey or hide rather than show:
// control characters (C0, DEL, C1; newline and tab too), invisible format
// characters (bidi overrides, zero-width joiners), the line and paragraph
// separators, and U+FFFD, which stands for bytes that were not UTF-8.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}
