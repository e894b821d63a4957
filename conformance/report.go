package conformance

import (
	"fmt"
	"time"
)

// Verdict is the outcome of one check.
type Verdict string

const (
	VerdictPass Verdict = "pass"
	VerdictFail Verdict = "fail" // a Must check failed
	VerdictWarn Verdict = "warn" // a Should check failed
	VerdictSkip Verdict = "skip" // could not run here; Reason says why
	VerdictInfo Verdict = "info" // an Info check found something worth knowing
	// VerdictInconclusive: the suite could not complete the check's setup
	// (its own automation failed), so the server was not judged. It never
	// fails the run.
	VerdictInconclusive Verdict = "inconclusive"
	// VerdictBlocked: a setup step the check needed failed (a refused
	// registration, a sign-in that gave no token) and the check named in
	// Result.BlockedBy reports it; this one was not judged. It never fails
	// the run: the blocker does, once, when the failure is the server's.
	VerdictBlocked Verdict = "blocked"
)

// Result is the outcome of one check, with the check's metadata.
type Result struct {
	ID       string
	Title    string
	Area     string
	Source   string
	Severity Severity
	Verdict  Verdict
	Reason   string
	// Flag names what would let an inconclusive check run (e.g.
	// --browser-command).
	Flag string
	// BlockedBy is the check that reports the failed setup step of a
	// blocked check.
	BlockedBy string
	Duration  time.Duration
	// Expected is set when the check failed (or warned) and the baseline lists
	// it as an expected failure.
	Expected bool
	// Unmet is the need that kept a skipped check from running; 0 for checks
	// that ran, or skipped themselves (the target lacks what they test).
	Unmet Need
	// Exchanges are the HTTP requests and answers that led to a verdict
	// other than pass, secrets redacted.
	Exchanges []Exchange
}

// Report is the outcome of a run, in catalogue order.
type Report struct {
	Target   string
	Started  time.Time
	Duration time.Duration
	Results  []Result
	// Stale lists baseline problems that fail the run: entries whose check now
	// passes, and entries naming no check.
	Stale []string
}

// Summary counts verdicts.
type Summary struct {
	Pass int `json:"pass"`
	Fail int `json:"fail"`
	Warn int `json:"warn"`
	Skip int `json:"skip"`
	Info int `json:"info"`
	// Inconclusive checks were not judged: the suite's setup failed.
	Inconclusive int `json:"inconclusive"`
	// Blocked checks were not judged: a step another check reports failed.
	Blocked int `json:"blocked"`
}

// Summary counts the verdicts of the report.
func (r *Report) Summary() Summary {
	var s Summary
	for _, res := range r.Results {
		s.add(res.Verdict)
	}
	return s
}

// add counts one verdict.
func (s *Summary) add(v Verdict) {
	switch v {
	case VerdictPass:
		s.Pass++
	case VerdictFail:
		s.Fail++
	case VerdictWarn:
		s.Warn++
	case VerdictSkip:
		s.Skip++
	case VerdictInfo:
		s.Info++
	case VerdictInconclusive:
		s.Inconclusive++
	case VerdictBlocked:
		s.Blocked++
	}
}

// Failed reports whether the run fails: a Must check failed that the baseline
// does not expect, or the baseline is stale.
func (r *Report) Failed() bool {
	if len(r.Stale) > 0 {
		return true
	}
	for _, res := range r.Results {
		if res.Verdict == VerdictFail && !res.Expected {
			return true
		}
	}
	return false
}

// ExitCode is 1 when the run failed, else 0: inconclusive and blocked
// checks, warnings and information never fail a run.
func (r *Report) ExitCode() int {
	if r.Failed() {
		return 1
	}
	return 0
}

// applyBaseline marks expected failures and records stale entries. all is the
// full list of checks the run was given, so that an entry for a check that was
// filtered out is not taken for a typo.
func (r *Report) applyBaseline(b *Baseline, all []Check) {
	if b == nil {
		return
	}
	known := map[string]bool{}
	for _, c := range all {
		known[c.ID] = true
	}
	for _, id := range b.IDs() {
		if !known[id] {
			r.Stale = append(r.Stale, fmt.Sprintf("%s: baseline entry names no check", id))
		}
	}
	for i := range r.Results {
		res := &r.Results[i]
		if !b.Has(res.ID) {
			continue
		}
		switch res.Verdict {
		case VerdictFail, VerdictWarn, VerdictInfo:
			res.Expected = true
		case VerdictPass:
			r.Stale = append(r.Stale, fmt.Sprintf("%s: passes but the baseline expects it to fail; remove the entry", res.ID))
		}
	}
}
