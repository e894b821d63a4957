package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Severity says what a failing check means: a Must failure fails the run, a
// Should failure is reported as a warning, an Info finding is only noted
// (something a client copes with, worth knowing).
type Severity int

const (
	Must Severity = iota
	Should
	Info
)

func (s Severity) String() string {
	switch s {
	case Should:
		return "should"
	case Info:
		return "info"
	}
	return "must"
}

// Need is something a check requires beyond plain HTTP access to the target.
type Need int

const (
	// NeedApproval: a user must approve (or deny) a consent screen or a device
	// code, through Target.Approver.
	NeedApproval Need = iota + 1
	// NeedTimeTravel: the check moves the server's clock by Check.Wait, through
	// Target.Clock, or waits that long for real when Options.RealTime is set.
	NeedTimeTravel
	// NeedAPIKey: the check uses the test user's API key (Target.APIKey, or read
	// from Settings by the Approver).
	NeedAPIKey
	// NeedDestructive: the check changes state other checks or later runs rely
	// on (regenerating the API key). It runs alone, and only when
	// Options.Destructive is set.
	NeedDestructive
	// NeedSession: the check needs a logged-in browser session (Target.Session,
	// or an Approver that implements SessionSource).
	NeedSession
	// NeedClockURL: the check sends requests of its own to the test clock's
	// endpoint (Target.Clock must be an *HTTPClock), without moving time.
	NeedClockURL
	// NeedCIMDPrivate: the target fetches Client ID Metadata Documents from
	// the suite's loopback document host (Target.CIMDPrivate).
	NeedCIMDPrivate
	// NeedMachineClient: the check uses the target's machine clients
	// (Target.Machine) for the client credentials grant.
	NeedMachineClient
)

func (n Need) String() string {
	switch n {
	case NeedApproval:
		return "approval"
	case NeedTimeTravel:
		return "time-travel"
	case NeedAPIKey:
		return "api-key"
	case NeedDestructive:
		return "destructive"
	case NeedSession:
		return "session"
	case NeedClockURL:
		return "clock-url"
	case NeedCIMDPrivate:
		return "cimd-private"
	case NeedMachineClient:
		return "machine-client"
	}
	return fmt.Sprintf("need(%d)", int(n))
}

// Check is one entry of the catalogue.
type Check struct {
	ID       string // stable, e.g. "DISC-01"; baselines refer to it
	Title    string
	Area     string // discovery, register, authorize, token, device, ping, apikey, headers, login
	Source   string // where the rule comes from, e.g. "contract §Discovery documents" or "RFC 8628 §3.5 via decisions.md"
	Severity Severity
	Needs    []Need
	// Wait is the total time a NeedTimeTravel check moves the clock by. With
	// Options.RealTime and no clock it is waited for real, so it also bounds
	// which checks can run that way.
	Wait time.Duration
	// SignsIn marks a check that may have the approver sign the test user
	// in without needing approval to run (it sees past a sign-in page).
	// Where every check shares one client (pre-registered), a sign-in can
	// replace the grant another check holds: such checks, and those that
	// need approval, then run one at a time.
	SignsIn bool
	Run     func(ctx context.Context, e *Env) error
}

// signsIn reports whether the check may sign the test user in.
func (c Check) signsIn() bool { return c.SignsIn || c.Has(NeedApproval) }

// Has reports whether the check declares need n.
func (c Check) Has(n Need) bool {
	for _, x := range c.Needs {
		if x == n {
			return true
		}
	}
	return false
}

// FailError is a check failure: what was expected and what came.
type FailError struct{ Msg string }

func (e *FailError) Error() string { return e.Msg }

// SkipError means the check could not run here; Reason says why.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// InconclusiveError means the suite could not complete the check's setup
// (its approver could not drive a sign-in page, its own automation timed
// out): the server was not judged. Flag names what would let it run.
type InconclusiveError struct{ Reason, Flag string }

func (e *InconclusiveError) Error() string { return "inconclusive: " + e.Reason }

// BlockedError means a setup step the check depends on (registering a
// client, signing in) failed, and check By is the one that reports that
// failure: this check was not judged. Flag, as for InconclusiveError, names
// what would let it run when the blocker is inconclusive.
type BlockedError struct{ By, Reason, Flag string }

func (e *BlockedError) Error() string { return "blocked by " + e.By + ": " + e.Reason }

// Fail returns a check failure. Say what was expected and what came.
func Fail(format string, args ...any) error {
	return &FailError{Msg: fmt.Sprintf(format, args...)}
}

// Skip returns an error that marks the check as skipped.
func Skip(reason string) error { return &SkipError{Reason: reason} }

// approverFail reports that the approver could not get through the
// authorization server's pages: a limit of the suite's automation, not a
// fault of a server whose pages no specification describes.
func approverFail(err error) error {
	var se *SkipError
	if errors.As(err, &se) {
		return err
	}
	return &InconclusiveError{
		Reason: fmt.Sprintf("the approver could not complete sign-in and consent: %v", err),
		Flag:   "--approve=browser, --browser-command (a script that drives this sign-in page) or --approve=manual",
	}
}

// setupFail reports that a step the check depends on (registering a client,
// obtaining a token) failed, so the check itself could not be judged; it is
// still a failure, never a silent pass.
func setupFail(step string, err error) error {
	var se *SkipError
	if errors.As(err, &se) {
		return err
	}
	return Fail("setup: %s: %v", step, err)
}

// Catalogue returns every check in a stable order: by area, then as declared.
// It builds a fresh slice on each call; there is no package-level registry.
func Catalogue() []Check {
	var all []Check
	for _, area := range [][]Check{
		discoveryChecks(),
		registerChecks(),
		authorizeChecks(),
		tokenChecks(),
		refreshChecks(),
		revokeChecks(),
		cimdChecks(),
		deviceChecks(),
		pingChecks(),
		apiKeyChecks(),
		headerChecks(),
		loginChecks(),
		machineChecks(),
		blindSpotChecks(), // last: each joins its area below
	} {
		all = append(all, area...)
	}
	// Checks declared apart from their area (blindSpotChecks) join it.
	rank := map[string]int{}
	for _, c := range all {
		if _, ok := rank[c.Area]; !ok {
			rank[c.Area] = len(rank)
		}
	}
	slices.SortStableFunc(all, func(a, b Check) int { return rank[a.Area] - rank[b.Area] })
	return all
}
