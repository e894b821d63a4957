package cmdutil

import (
	"fmt"
	"strings"
	"unicode"
)

// Printable makes server-supplied text safe to write to a terminal: control
// characters (ESC, CR, the C1 range) and invisible format characters (bidi
// overrides) are shown as \x1b-style escapes instead of being obeyed, so an
// error_description, header or body cannot move the cursor, rewrite the
// line before it or hide what follows. Newlines and tabs stay.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar
}
