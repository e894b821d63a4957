package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaseline(t *testing.T) {
	known, err := ParseBaseline(strings.NewReader("# known gaps\nDISC-07  # issuer has a slash\nREG-01\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Results: []Result{{ID: "DISC-07", Verdict: VerdictFail}, {ID: "REG-01", Verdict: VerdictPass}, {ID: "REG-11", Verdict: VerdictFail}}}
	rep.applyBaseline(known, Catalogue())
	if !rep.Results[0].Expected || rep.Results[2].Expected {
		t.Errorf("Expected flags: DISC-07 %v (want true), REG-11 %v (want false)", rep.Results[0].Expected, rep.Results[2].Expected)
	}
	if len(rep.Stale) != 1 || !strings.HasPrefix(rep.Stale[0], "REG-01: passes") {
		t.Errorf("stale: %q, want REG-01", rep.Stale)
	}
	tests := []struct {
		name     string
		baseline string
		results  []Result
		failed   bool
	}{
		{"unexpected failure", "", []Result{{ID: "DISC-07", Verdict: VerdictFail}}, true},
		{"expected failure", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictFail}}, false},
		{"stale entry", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, true},
		{"unknown entry", "NOPE-01\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, true},
		{"skipped entry is not stale", "DISC-07\n", []Result{{ID: "DISC-07", Verdict: VerdictSkip}}, false},
		{"filtered-out entry is not stale", "DISC-08\n", []Result{{ID: "DISC-07", Verdict: VerdictPass}}, false},
		{"expected warning", "PING-10\n", []Result{{ID: "PING-10", Verdict: VerdictWarn}}, false},
		{"warnings do not fail", "", []Result{{ID: "PING-10", Verdict: VerdictWarn}}, false},
		{"blocked checks do not fail", "", []Result{{ID: "MCP-52", Verdict: VerdictBlocked}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBaseline(strings.NewReader(tt.baseline))
			if err != nil {
				t.Fatal(err)
			}
			rep := &Report{Results: tt.results}
			rep.applyBaseline(b, Catalogue())
			if rep.Failed() != tt.failed {
				t.Errorf("Failed() = %v, want %v (stale %q)", rep.Failed(), tt.failed, rep.Stale)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.failed]; rep.ExitCode() != want {
				t.Errorf("ExitCode() = %d, want %d", rep.ExitCode(), want)
			}
		})
	}
	if _, err := ParseBaseline(strings.NewReader("DISC-01\nnot an id\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: err = %v, want one naming line 2", err)
	}
	path := filepath.Join(t.TempDir(), "baseline.txt")
	if err := os.WriteFile(path, []byte("# none\n\nHDR-05\nHDR-05\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(path)
	if err != nil || len(b.IDs()) != 1 || !b.Has("HDR-05") {
		t.Errorf("LoadBaseline: %v, %v", b.IDs(), err)
	}
}
