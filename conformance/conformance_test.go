package conformance

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

var idShape = regexp.MustCompile(`^([A-Z]+)-[0-9]{2}$`)

var areaPrefix = map[string]string{
	"discovery": "DISC", "register": "REG", "authorize": "AUTHZ", "token": "TOKEN", "device": "DEV",
	"ping": "PING", "apikey": "KEY", "headers": "HDR", "login": "LOGIN",
}

func TestCatalogue(t *testing.T) {
	cat := Catalogue()
	if len(cat) < 50 {
		t.Errorf("catalogue has %d checks, want at least 50", len(cat))
	}
	seen := map[string]bool{}
	for _, c := range cat {
		m := idShape.FindStringSubmatch(c.ID)
		switch {
		case m == nil:
			t.Errorf("%s: ID does not look like AREA-NN", c.ID)
		case areaPrefix[c.Area] != m[1]:
			t.Errorf("%s: area %q, want the prefix %s", c.ID, c.Area, areaPrefix[c.Area])
		}
		if seen[c.ID] {
			t.Errorf("%s: duplicate ID", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Source == "" || c.Run == nil {
			t.Errorf("%s: title, source and run are required", c.ID)
		}
		if c.Has(NeedTimeTravel) != (c.Wait > 0) {
			t.Errorf("%s: NeedTimeTravel and Wait (%s) must go together", c.ID, c.Wait)
		}
	}
}

// runFake runs the checks matching filter against a fake service.
func runFake(t *testing.T, s *fakeService, filter string, opts Options) *Report {
	t.Helper()
	if filter != "" {
		opts.Filter = regexp.MustCompile(filter)
	}
	opts.Destructive = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return Run(ctx, s.target(t), opts)
}

func TestCorrectServicePassesEveryCheck(t *testing.T) {
	s := newFakeService(t)
	rep := runFake(t, s, "", Options{Parallel: 8})
	for _, r := range rep.Results {
		if r.Verdict != VerdictPass {
			t.Errorf("%s %s: %s: %s", r.ID, r.Title, r.Verdict, r.Reason)
		}
	}
	if got, want := len(rep.Results), len(Catalogue()); got != want {
		t.Errorf("report has %d results, want %d", got, want)
	}
	if rep.Failed() {
		t.Errorf("run failed against a correct service")
	}
	if t.Failed() {
		var b strings.Builder
		_ = rep.WriteText(&b, TextOptions{})
		t.Log("\n" + b.String())
	}
}
