package textwrap_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/textwrap"
)

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		w    int
		want []string
	}{
		{"short", 10, []string{"short"}},
		{"no protected resource metadata found", 16, []string{"no protected", "resource", "metadata found"}},
		{"ab abcdefghij", 4, []string{"ab", "abcd", "efgh", "ij"}},
		{"日本語", 1, []string{"日", "本", "語"}}, // wider than the cell: one rune a line
	} {
		if got := textwrap.Lines(tt.in, tt.w); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Lines(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
}

// Words keeps a word wider than the line whole, on a line of its own.
func TestWordsNeverCutsAWord(t *testing.T) {
	in := "chmod 600 /home/someone/.config/mcpauth/tok-1.json now"
	want := "chmod 600|/home/someone/.config/mcpauth/tok-1.json|now"
	if got := textwrap.Words(in, 12); strings.Join(got, "|") != want {
		t.Errorf("Words(%q, 12) = %q, want %q", in, got, want)
	}
	if got := textwrap.Words("no protected resource metadata found", 16); strings.Join(got, "|") != "no protected|resource|metadata found" {
		t.Errorf("Words breaks at spaces like Lines: %q", got)
	}
}
