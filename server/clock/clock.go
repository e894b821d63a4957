// Package clock gives the reference server its sense of time. Logic never calls
// time.Now directly: it asks a Clock, so expiries (10 min codes, 900 s device
// codes, 24 h tokens) are tested by moving a clock rather than by waiting.
package clock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Fake is a manually driven clock for tests. The zero value starts at the Unix
// epoch; use NewFake for a realistic start.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Offset is the wall clock plus an adjustable offset. `mcpauth serve
// --test-clock` uses it so a suite in another process can jump forward in time
// while everything else (timeouts, rate limiters) keeps flowing naturally.
type Offset struct {
	mu     sync.Mutex
	base   Clock
	offset time.Duration
	shared Counter // nil: the offset lives in this process only
}

// Counter is an atomic shared counter (store.Store has one). A shared Offset
// keeps its offset, in milliseconds, in it, so every instance on one
// database sees the same time.
type Counter interface {
	AddCounter(ctx context.Context, name string, delta int64) (int64, error)
}

const offsetCounter = "test_clock_offset_ms"

// NewOffset returns an Offset clock over base (Real when nil).
func NewOffset(base Clock) *Offset {
	if base == nil {
		base = Real{}
	}
	return &Offset{base: base}
}

// NewSharedOffset returns an Offset clock whose offset is kept in c, shared
// by every instance using the same counter store.
func NewSharedOffset(base Clock, c Counter) *Offset {
	o := NewOffset(base)
	o.shared = c
	return o
}

// Now returns the base time plus the offset. A shared clock reads the
// counter each time; if that fails it keeps the last offset it saw.
func (o *Offset) Now() time.Time {
	o.refresh(context.Background())
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.base.Now().Add(o.offset)
}

func (o *Offset) refresh(ctx context.Context) {
	if o.shared == nil {
		return
	}
	if ms, err := o.shared.AddCounter(ctx, offsetCounter, 0); err == nil {
		o.mu.Lock()
		o.offset = time.Duration(ms) * time.Millisecond
		o.mu.Unlock()
	}
}

// Advance adds d to the offset; for a shared clock it reports a failure to
// update the counter.
func (o *Offset) Advance(ctx context.Context, d time.Duration) error {
	if o.shared != nil {
		ms, err := o.shared.AddCounter(ctx, offsetCounter, d.Milliseconds())
		if err != nil {
			return fmt.Errorf("advancing the shared test clock: %w", err)
		}
		o.mu.Lock()
		o.offset = time.Duration(ms) * time.Millisecond
		o.mu.Unlock()
		return nil
	}
	o.mu.Lock()
	o.offset += d
	o.mu.Unlock()
	return nil
}

// Offset returns how far the clock has been moved.
func (o *Offset) Offset() time.Duration {
	o.refresh(context.Background())
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.offset
}
