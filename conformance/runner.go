package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// Options tune a run.
type Options struct {
	Filter          *regexp.Regexp // run only checks whose ID matches (--run)
	Parallel        int            // checks run at once in the parallel phase; default 4
	PerCheckTimeout time.Duration  // default 60 s; real-time waits are added to it
	// RealTime lets time-travel checks wait for real when the target has no
	// clock, up to MaxRealWait (default 60 s) each; longer ones are skipped.
	RealTime    bool
	MaxRealWait time.Duration
	// Destructive allows checks that change state later runs rely on, such as
	// regenerating the test user's API key.
	Destructive bool
	Baseline    *Baseline // expected failures
	OnProgress  func(Progress)
	Now         func() time.Time // default time.Now; only for timing the report
}

// ProgressEvent says what happened to a check.
type ProgressEvent string

const (
	EventStart   ProgressEvent = "start"
	EventWaiting ProgressEvent = "waiting"
	EventDone    ProgressEvent = "done"
)

// Progress is reported through Options.OnProgress; it may be called from
// several goroutines at once.
type Progress struct {
	CheckID string
	Event   ProgressEvent
	Message string
	Result  *Result // set for EventDone
}

// Run runs the whole catalogue against target.
func Run(ctx context.Context, target Target, opts Options) *Report {
	return RunChecks(ctx, target, Catalogue(), opts)
}

// RunChecks runs checks against target. Checks that move the server clock or
// change shared state run one at a time after all others, because a clock jump
// would disturb every check in flight; the rest run in parallel. With
// pre-registered clients (Target.Clients) every check shares one client, and
// an authorization server may replace the user's grant to a client on each
// sign-in: the checks that sign in then run one at a time, beside the
// others. Results keep the order of checks whatever the order they finish in.
func RunChecks(ctx context.Context, target Target, checks []Check, opts Options) *Report {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	if opts.PerCheckTimeout <= 0 {
		opts.PerCheckTimeout = 60 * time.Second
	}
	if opts.MaxRealWait <= 0 {
		opts.MaxRealWait = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	base := strings.TrimRight(target.BaseURL, "/")
	hc := &http.Client{Timeout: 30 * time.Second}
	if target.HTTP != nil {
		c := *target.HTTP // a copy: the caller's client keeps its redirect policy
		hc = &c
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	rep := &Report{Target: base, Started: opts.Now()}
	var selected []Check
	for _, c := range checks {
		if opts.Filter == nil || opts.Filter.MatchString(c.ID) {
			selected = append(selected, c)
		}
	}
	rep.Results = make([]Result, len(selected))
	run := &runState{secrets: &redact.Secrets{}}
	run.learnTarget(target)
	var parallel, signIns, sequential []int
	for i, c := range selected {
		rep.Results[i] = Result{ID: c.ID, Title: c.Title, Area: c.Area, Source: c.Source, Severity: c.Severity}
		if need, reason := unmet(c, target, &opts); reason != "" {
			rep.Results[i].Verdict, rep.Results[i].Reason, rep.Results[i].Unmet = VerdictSkip, reason, need
			if opts.OnProgress != nil {
				res := rep.Results[i]
				opts.OnProgress(Progress{CheckID: c.ID, Event: EventDone, Result: &res})
			}
			continue
		}
		switch {
		case c.Has(NeedDestructive) || (c.Has(NeedTimeTravel) && target.Clock != nil):
			sequential = append(sequential, i)
		case c.signsIn() && len(target.Clients) > 0:
			signIns = append(signIns, i)
		default:
			parallel = append(parallel, i)
		}
	}
	envFor := func(c Check) *Env {
		return &Env{Check: c, base: base, target: target, hc: hc, opts: &opts, run: run}
	}

	var wg sync.WaitGroup
	sem := make(chan struct{}, opts.Parallel)
	// The sign-ins one after another, in one lane that takes a slot of sem
	// for each check.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, i := range signIns {
			sem <- struct{}{}
			runOne(ctx, envFor(selected[i]), &rep.Results[i])
			<-sem
		}
	}()
	for _, i := range parallel {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runOne(ctx, envFor(selected[i]), &rep.Results[i])
		}()
	}
	wg.Wait()
	for _, i := range sequential {
		runOne(ctx, envFor(selected[i]), &rep.Results[i])
	}

	if h, err := run.docs.peek(); err == nil && h != nil {
		_ = h.Close()
	}
	for i := range rep.Results {
		run.finish(&rep.Results[i])
	}
	rep.applyBaseline(opts.Baseline, checks)
	rep.Duration = opts.Now().Sub(rep.Started)
	return rep
}

// unmet returns why check c cannot run against target, and the need that
// is not met (which report.SkipHints turns into the options that would
// meet it); "" when it can run.
func unmet(c Check, t Target, o *Options) (Need, string) {
	for _, n := range c.Needs {
		switch n {
		case NeedApproval:
			if t.Approver == nil {
				return n, "needs an approver to approve consent screens and device codes (--approve=form or --approve=manual)"
			}
		case NeedTimeTravel:
			if t.Clock != nil {
				continue
			}
			if !o.RealTime {
				return n, fmt.Sprintf("needs a test clock to move time by %s (or real-time waiting)", c.Wait)
			}
			if c.Wait > o.MaxRealWait {
				return n, fmt.Sprintf("would wait %s of real time (limit %s); needs a test clock", c.Wait, o.MaxRealWait)
			}
		case NeedAPIKey:
			if t.APIKey == "" && t.Approver == nil {
				return n, "needs the test user's API key, or an approver that reads it from Settings"
			}
		case NeedDestructive:
			if !o.Destructive {
				return n, "changes state later runs rely on (regenerates the API key); allow destructive checks to run it"
			}
			if t.Approver == nil {
				return n, "needs an approver to act in Settings"
			}
		case NeedSession:
			if !t.hasSession() {
				return n, "needs a browser session, or an approver that can log in"
			}
		case NeedCIMDPrivate:
			if !t.CIMDPrivate {
				return n, "needs a target that fetches client metadata documents from the suite's loopback host (--cimd-private)"
			}
		case NeedMachineClient:
			if t.Machine == nil {
				return n, noMachine
			}
		case NeedClockURL:
			if _, ok := t.Clock.(*HTTPClock); !ok {
				return n, "needs the test clock's URL (--clock-url)"
			}
		}
	}
	return 0, ""
}

// runOne runs a check under its own timeout and records the verdict.
func runOne(ctx context.Context, e *Env, r *Result) {
	c := e.Check
	if ctx.Err() != nil {
		r.Verdict, r.Reason = VerdictSkip, "run cancelled"
		return
	}
	if e.opts.OnProgress != nil {
		e.opts.OnProgress(Progress{CheckID: c.ID, Event: EventStart})
	}
	timeout := e.opts.PerCheckTimeout
	if c.Has(NeedTimeTravel) && e.target.Clock == nil {
		timeout += c.Wait
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := e.opts.Now()
	done := make(chan error, 1)
	go func() {
		defer e.releaseClient() // only once the check is done with it, even late
		defer func() {
			if p := recover(); p != nil {
				done <- Fail("check panicked: %v", p)
			}
		}()
		done <- c.Run(cctx, e)
	}()
	var err error
	select {
	case err = <-done:
	case <-cctx.Done():
		// The check ignores its context; leave it behind rather than hang the run.
		err = cctx.Err()
	}
	var ie *InconclusiveError
	var be *BlockedError
	if (errors.As(err, &ie) || errors.As(err, &be)) && ctx.Err() == nil {
		// Already judged: the suite's own automation failed, or a step
		// another check reports did.
	} else if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		if e.approving.Load() > 0 {
			// Our own automation hung on a page, not the server on a request.
			err = &InconclusiveError{Reason: fmt.Sprintf("timed out after %s driving the sign-in pages: %v", timeout, err),
				Flag: "--browser-command, --approve=manual or a longer --timeout"}
		} else {
			err = Fail("timed out after %s: %v", timeout, err)
		}
	} else if ctx.Err() != nil && err != nil {
		err = Skip("run cancelled")
	}
	r.Duration = e.opts.Now().Sub(start)
	r.Verdict, r.Reason, r.Flag = verdict(c, err)
	if r.Verdict == VerdictBlocked && errors.As(err, &be) {
		r.BlockedBy = be.By
	}
	if r.Verdict != VerdictPass && r.Verdict != VerdictSkip {
		r.Exchanges = e.log.exchanges(e.run.secrets)
	}
	e.run.finish(r)
	if e.opts.OnProgress != nil {
		res := *r
		e.opts.OnProgress(Progress{CheckID: c.ID, Event: EventDone, Result: &res})
	}
}

func verdict(c Check, err error) (v Verdict, reason, flag string) {
	if err == nil {
		return VerdictPass, "", ""
	}
	var se *SkipError
	if errors.As(err, &se) {
		return VerdictSkip, se.Reason, ""
	}
	var ie *InconclusiveError
	if errors.As(err, &ie) {
		return VerdictInconclusive, ie.Reason, ie.Flag
	}
	var be *BlockedError
	if errors.As(err, &be) {
		return VerdictBlocked, be.Error(), be.Flag
	}
	switch c.Severity {
	case Should:
		return VerdictWarn, err.Error(), ""
	case Info:
		return VerdictInfo, err.Error(), ""
	}
	return VerdictFail, err.Error(), ""
}
