package flowstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

var (
	_ flows.Clock = (*flowstest.FakeClock)(nil)
	_ flows.Clock = flows.RealClock{}
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fired(ch <-chan time.Time) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestManualClock(t *testing.T) {
	c := flowstest.NewFakeClock(t0)
	a := c.After(5 * time.Second)
	b := c.After(10 * time.Second)
	if fired(a) || c.Waiters() != 2 {
		t.Fatal("timer fired before time moved")
	}
	c.Advance(4 * time.Second)
	if fired(a) {
		t.Fatal("fired 1 s early")
	}
	c.Advance(time.Second)
	if !fired(a) || fired(b) || c.Waiters() != 1 {
		t.Fatal("want exactly the 5 s timer fired at 5 s")
	}
	c.Set(t0.Add(time.Minute))
	if !fired(b) || !c.Now().Equal(t0.Add(time.Minute)) {
		t.Fatal("Set did not fire the due timer")
	}
	if !fired(c.After(0)) {
		t.Fatal("After(0) should fire at once")
	}
}

func TestBlockUntil(t *testing.T) {
	c := flowstest.NewFakeClock(t0)
	go func() { <-c.After(time.Hour) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("BlockUntil: %v", err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	if err := c.BlockUntil(short, 2); err == nil {
		t.Fatal("BlockUntil(2) returned with one waiter")
	}
}

func TestAutoClock(t *testing.T) {
	c := flowstest.NewAutoClock(t0)
	if !fired(c.After(7*time.Second)) || !c.Now().Equal(t0.Add(7*time.Second)) {
		t.Fatal("auto After should fire at once and move time by d")
	}
	if !fired(c.After(5*time.Second)) || !c.Now().Equal(t0.Add(12*time.Second)) {
		t.Fatal("second auto After did not fire or move time")
	}
	if got := c.Waits(); len(got) != 2 || got[0] != 7*time.Second || got[1] != 5*time.Second {
		t.Fatalf("Waits = %v", got)
	}
	if c.Waiters() != 0 {
		t.Fatalf("%d timers left pending in auto mode", c.Waiters())
	}
}
