package redact

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestFieldEscapesAndBounds(t *testing.T) {
	long := strings.Repeat("é", MaxField+1)
	for in, want := range map[string]string{
		"mona":                                   "mona",
		"two\nlines\tand a tab":                  `two\x0alines\x09and a tab`,
		"\x1b]52;c;cm0gLXJmIH4K\x07":             `\x1b]52;c;cm0gLXJmIH4K\x07`,
		"tag \U000e0041 and \u2028sep":           `tag \U000e0041 and \u2028sep`,
		long:                                     strings.Repeat("é", MaxField-1) + Ellipsis,
		strings.Repeat("a", MaxField-2) + "\x1b": strings.Repeat("a", MaxField-2) + Ellipsis, // the escape is not split
	} {
		if got := Field(in); got != want {
			t.Errorf("Field(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Text("two\nlines\tkept\r"); got != "two\nlines\tkept\\x0d" {
		t.Errorf("Text keeps newline and tab: %q", got)
	}
	if got := Clean("abc", 0, false); got != "" {
		t.Errorf("Clean to 0 runes: %q", got)
	}
}

// FuzzClean: whatever a server sends, what the rule prints holds no
// control or format character (but newline and tab where lines are
// allowed), is never longer than the bound, and plain text within the
// bound is printed as it came.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "mona", "\x1b]0;t\x07", "a\u009bb\u202ec", "\xff\xfe", "x\ny\tz\r", strings.Repeat("\x1b", 300)} {
		f.Add(s, 200, false)
		f.Add(s, 5, true)
	}
	f.Fuzz(func(t *testing.T, s string, limit int, lines bool) {
		limit = limit%(2*MaxField) + 1
		if limit < 1 {
			limit += 2 * MaxField
		}
		got := Clean(s, limit, lines)
		if n := utf8.RuneCountInString(got); n > limit {
			t.Fatalf("Clean(%q, %d) = %q: %d runes", s, limit, got, n)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q, %d) = %q: not UTF-8", s, limit, got)
		}
		for _, r := range got {
			allowed := lines && (r == '\n' || r == '\t')
			if !allowed && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("Clean(%q, %d, %v) = %q: raw %U", s, limit, lines, got, r)
			}
		}
		plain := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsControl(r) && !(lines && (r == '\n' || r == '\t')) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029'
		})
		if plain && utf8.RuneCountInString(s) <= limit && got != s {
			t.Fatalf("plain %q changed to %q", s, got)
		}
		if !plain && got == s && s != "" {
			t.Fatalf("unsafe %q passed unchanged", s)
		}
	})
}
