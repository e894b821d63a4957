package flows

import "time"

// Clock is the only source of time for the flows: expiries, poll intervals and
// the login timeout all go through it, so tests can run a 15-minute device
// flow in microseconds (see package flowstest).
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has elapsed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func clockOr(c Clock) Clock {
	if c == nil {
		return RealClock{}
	}
	return c
}
