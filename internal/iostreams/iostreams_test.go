package iostreams

import "testing"

// Tables get COLUMNS when set, 80 on a terminal that said nothing, and no
// limit on a pipe.
func TestTerminalWidth(t *testing.T) {
	env := map[string]string{"COLUMNS": "132"}
	if got := Columns(func(k string) string { return env[k] }); got != 132 {
		t.Fatalf("COLUMNS=132: %d", got)
	}
	for _, bad := range []string{"", "wide", "-3", "0"} {
		env["COLUMNS"] = bad
		if got := Columns(func(k string) string { return env[k] }); got != 0 {
			t.Errorf("COLUMNS=%q: %d, want 0", bad, got)
		}
	}
	for _, tt := range []struct {
		s    IOStreams
		want int
	}{
		{IOStreams{Width: 100}, 100},
		{IOStreams{Width: 100, StdoutTTY: true}, 100},
		{IOStreams{StdoutTTY: true}, 80},
		{IOStreams{}, 0},
	} {
		if got := tt.s.TerminalWidth(); got != tt.want {
			t.Errorf("%+v: %d, want %d", tt.s, got, tt.want)
		}
	}
}
