// Package flowstest holds test helpers for code that drives the flows
// package: a fake Clock whose timers fire when the test moves time forward,
// and Server, a fake MCP server with its own authorization server.
package flowstest

import (
	"context"
	"sync"
	"time"
)

// FakeClock is a Clock (see flows.Clock) driven by the test.
//
// In manual mode (NewFakeClock) timers created by After fire only when Advance
// or Set moves the clock past their deadline; BlockUntil lets a test wait until
// the code under test is parked on a timer before moving time.
//
// In auto mode (NewAutoClock) every After call advances the clock by d at once
// and returns a channel that has already fired, so a poller that waits between
// requests runs at full speed while still seeing the time it asked for. Auto
// mode suits code with a single waiter (device polling); use manual mode when a
// flow also waits on a long timeout (the login timeout would fire at once).
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	auto    bool
	waiters []waiter
	waits   []time.Duration
	changed chan struct{} // closed and replaced whenever waiters change
}

type waiter struct {
	deadline time.Time
	ch       chan time.Time
}

// NewFakeClock returns a manual FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock {
	return &FakeClock{now: t, changed: make(chan struct{})}
}

// NewAutoClock returns a FakeClock in auto mode reading t.
func NewAutoClock(t time.Time) *FakeClock {
	c := NewFakeClock(t)
	c.auto = true
	return c
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the fake time once it has moved d past
// the current reading. Every requested d is recorded (see Waits).
func (c *FakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	if c.auto && d > 0 {
		c.setLocked(c.now.Add(d)) // also fires timers that fall due on the way
		d = 0
	}
	deadline := c.now.Add(d)
	if !deadline.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{deadline: deadline, ch: ch})
	c.notifyLocked()
	return ch
}

// Advance moves the clock forward by d and fires the timers that are due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// Set moves the clock to t and fires the timers that are due.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(t)
}

func (c *FakeClock) setLocked(t time.Time) {
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.deadline.After(t) {
			w.ch <- t // buffered, never blocks
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
	c.notifyLocked()
}

func (c *FakeClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Waiters returns how many timers are pending.
func (c *FakeClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// Waits returns every duration passed to After so far, in order.
func (c *FakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// BlockUntil waits until at least n timers are pending or ctx ends.
func (c *FakeClock) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		pending, changed := len(c.waiters), c.changed
		c.mu.Unlock()
		if pending >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
