package promtext

import (
	"strings"
	"testing"
)

// A command name may hold spaces and parentheses; fields count from after
// its last ')'.
func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c d) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 5 0 123456 987654321 2048 18446744073709551615\n"
	st, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := (procStat{utime: 250, stime: 75, starttime: 123456, vsize: 987654321, rssPages: 2048}); st != want {
		t.Errorf("parseStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "4242 no parens", strings.TrimSuffix(line, " 2048 18446744073709551615\n"), "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 12"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}
