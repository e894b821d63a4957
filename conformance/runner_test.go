package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func synthetic(id string, run func(ctx context.Context, e *Env) error, needs ...Need) Check {
	c := Check{ID: id, Title: "synthetic " + id, Area: "test", Source: "runner_test.go", Needs: needs, Run: run}
	if c.Has(NeedTimeTravel) {
		c.Wait = time.Second
	}
	return c
}

func TestRunnerKeepsOrderUnderParallelism(t *testing.T) {
	var inflight, peak atomic.Int32
	var checks []Check
	for i := range 16 {
		// Earlier checks sleep longer, so they finish last.
		d := time.Duration(16-i) * 3 * time.Millisecond
		checks = append(checks, synthetic(fmt.Sprintf("T-%02d", i), func(ctx context.Context, e *Env) error {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			return sleep(ctx, d)
		}))
	}
	rep := RunChecks(context.Background(), Target{BaseURL: "http://127.0.0.1:1"}, checks, Options{Parallel: 8})
	for i, r := range rep.Results {
		if want := fmt.Sprintf("T-%02d", i); r.ID != want || r.Verdict != VerdictPass {
			t.Errorf("result %d: got %s %s, want %s pass", i, r.ID, r.Verdict, want)
		}
	}
	if p := peak.Load(); p < 2 || p > 8 {
		t.Errorf("peak concurrency %d, want between 2 and 8", p)
	}
}

// recordingClock stands in for a server clock: the runner only needs to call
// it, and what matters here is when.
type recordingClock struct{ calls atomic.Int32 }

func (c *recordingClock) Advance(context.Context, time.Duration) error { c.calls.Add(1); return nil }

func TestTimeTravelAndDestructiveChecksRunAlone(t *testing.T) {
	var inflight atomic.Int32
	var mu sync.Mutex
	var overlaps []string
	body := func(alone bool) func(ctx context.Context, e *Env) error {
		return func(ctx context.Context, e *Env) error {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			if alone && n != 1 {
				mu.Lock()
				overlaps = append(overlaps, e.Check.ID)
				mu.Unlock()
			}
			if e.Check.Has(NeedTimeTravel) {
				if err := e.Advance(ctx, time.Second); err != nil {
					return err
				}
			}
			return sleep(ctx, 5*time.Millisecond)
		}
	}
	var checks []Check
	for i := range 12 {
		switch i % 4 {
		case 1:
			checks = append(checks, synthetic(fmt.Sprintf("T-%02d", i), body(true), NeedTimeTravel))
		case 3:
			checks = append(checks, synthetic(fmt.Sprintf("T-%02d", i), body(true), NeedDestructive, NeedApproval))
		default:
			checks = append(checks, synthetic(fmt.Sprintf("T-%02d", i), body(false)))
		}
	}
	clock := &recordingClock{}
	// An approver meets NeedApproval; these checks never call it.
	target := Target{BaseURL: "http://127.0.0.1:1", Clock: clock, Approver: struct{ Approver }{}}
	rep := RunChecks(context.Background(), target, checks, Options{Parallel: 8, Destructive: true})
	for _, r := range rep.Results {
		if r.Verdict != VerdictPass {
			t.Errorf("%s: %s %s", r.ID, r.Verdict, r.Reason)
		}
	}
	if len(overlaps) > 0 {
		t.Errorf("checks ran while others were in flight: %v", overlaps)
	}
	if got := clock.calls.Load(); got != 3 {
		t.Errorf("clock advanced %d times, want 3", got)
	}
}

func TestPerCheckTimeout(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	checks := []Check{
		synthetic("T-01", func(ctx context.Context, e *Env) error { <-ctx.Done(); return ctx.Err() }),
		// Ignores its context: the runner must leave it behind, not hang.
		synthetic("T-02", func(ctx context.Context, e *Env) error { <-stuck; return nil }),
		synthetic("T-03", func(ctx context.Context, e *Env) error { return nil }),
	}
	start := time.Now()
	rep := RunChecks(context.Background(), Target{BaseURL: "http://127.0.0.1:1"}, checks, Options{PerCheckTimeout: 50 * time.Millisecond})
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("run took %s", el)
	}
	for _, r := range rep.Results[:2] {
		if r.Verdict != VerdictFail || !strings.Contains(r.Reason, "timed out after 50ms") {
			t.Errorf("%s: got %s %q, want a time-out failure", r.ID, r.Verdict, r.Reason)
		}
	}
	if rep.Results[2].Verdict != VerdictPass {
		t.Errorf("T-03: %s", rep.Results[2].Verdict)
	}
}

func TestVerdicts(t *testing.T) {
	should := synthetic("T-02", func(context.Context, *Env) error { return Fail("nope") })
	should.Severity = Should
	checks := []Check{
		synthetic("T-01", func(context.Context, *Env) error { return Fail("want %d, got %d", 1, 2) }),
		should,
		synthetic("T-03", func(context.Context, *Env) error { return Skip("not here") }),
		synthetic("T-04", func(context.Context, *Env) error { return errors.New("dial tcp: refused") }),
		synthetic("T-05", func(context.Context, *Env) error { panic("boom") }),
		synthetic("T-06", func(context.Context, *Env) error { return fmt.Errorf("wrapped: %w", Skip("deep")) }),
	}
	rep := RunChecks(context.Background(), Target{BaseURL: "http://127.0.0.1:1"}, checks, Options{})
	want := []struct {
		v      Verdict
		reason string
	}{
		{VerdictFail, "want 1, got 2"}, {VerdictWarn, "nope"}, {VerdictSkip, "not here"},
		{VerdictFail, "dial tcp: refused"}, {VerdictFail, "check panicked: boom"}, {VerdictSkip, "deep"},
	}
	for i, r := range rep.Results {
		if r.Verdict != want[i].v || r.Reason != want[i].reason {
			t.Errorf("%s: got %s %q, want %s %q", r.ID, r.Verdict, r.Reason, want[i].v, want[i].reason)
		}
	}
	if s := rep.Summary(); s != (Summary{Pass: 0, Fail: 3, Warn: 1, Skip: 2}) {
		t.Errorf("summary %+v", s)
	}
}

func TestRealTimeWaiting(t *testing.T) {
	short := synthetic("T-01", func(ctx context.Context, e *Env) error {
		start := time.Now()
		if err := e.Advance(ctx, 100*time.Millisecond); err != nil {
			return err
		}
		if time.Since(start) < 100*time.Millisecond {
			return Fail("did not wait")
		}
		return nil
	}, NeedTimeTravel)
	short.Wait = 100 * time.Millisecond
	long := synthetic("T-02", func(context.Context, *Env) error { return nil }, NeedTimeTravel)
	long.Wait = 15 * time.Minute
	var waits atomic.Int32
	opts := Options{RealTime: true, OnProgress: func(p Progress) {
		if p.Event == EventWaiting {
			waits.Add(1)
		}
	}}
	rep := RunChecks(context.Background(), Target{BaseURL: "http://127.0.0.1:1"}, []Check{short, long}, opts)
	if r := rep.Results[0]; r.Verdict != VerdictPass {
		t.Errorf("short wait: %s %s", r.Verdict, r.Reason)
	}
	if r := rep.Results[1]; r.Verdict != VerdictSkip || !strings.Contains(r.Reason, "would wait 15m0s of real time") {
		t.Errorf("long wait: got %s %q, want a skip", r.Verdict, r.Reason)
	}
	if waits.Load() == 0 {
		t.Errorf("no progress reported while waiting")
	}
	// Without RealTime and without a clock, both are skipped.
	rep = RunChecks(context.Background(), Target{BaseURL: "http://127.0.0.1:1"}, []Check{short, long}, Options{})
	for _, r := range rep.Results {
		if r.Verdict != VerdictSkip || !strings.Contains(r.Reason, "needs a test clock") {
			t.Errorf("%s: got %s %q, want a skip for the missing clock", r.ID, r.Verdict, r.Reason)
		}
	}
}

func TestFilterAndCancel(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler()) // verdicts do not matter here
	defer s.Close()
	rep := Run(context.Background(), Target{BaseURL: s.URL}, Options{Filter: regexp.MustCompile(`^DISC-0[1-3]$`)})
	if len(rep.Results) != 3 || rep.Results[0].ID != "DISC-01" || rep.Results[2].ID != "DISC-03" {
		t.Errorf("filtered run: %+v", rep.Results)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep = Run(ctx, Target{BaseURL: s.URL}, Options{Filter: regexp.MustCompile(`^DISC-`)})
	for _, r := range rep.Results {
		if r.Verdict != VerdictSkip || r.Reason != "run cancelled" {
			t.Errorf("%s after cancel: %s %q", r.ID, r.Verdict, r.Reason)
		}
	}
}
