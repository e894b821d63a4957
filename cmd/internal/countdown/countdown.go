// Package countdown draws the "waiting… 4m59s left" line a command shows on
// a terminal while it waits for the user somewhere else (a browser, another
// device), so a wait is never silent and its limit is in sight.
package countdown

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// Countdown is one such line; the zero value is not usable (see New).
type Countdown struct {
	out     io.Writer
	clock   flows.Clock
	style   func(string) string
	done    chan struct{}
	cleared chan struct{} // closed once the line is cleared

	mu sync.Mutex // Start may run on another goroutine than Stop
	on bool
}

// New returns a countdown that draws on out, when enabled (a terminal,
// not --quiet), with style applied to the line (e.g. faint).
func New(out io.Writer, enabled bool, clock flows.Clock, style func(string) string) *Countdown {
	c := &Countdown{out: out, clock: clock, style: style, done: make(chan struct{}), cleared: make(chan struct{})}
	if !enabled {
		c.on = true // never starts
		close(c.cleared)
	}
	return c
}

// Start draws "<spinner> label… <left> left<hint>" until Stop; it starts
// once, and not after Stop.
func (c *Countdown) Start(label string, deadline time.Time, hint string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	if c.on {
		return
	}
	c.on = true
	go func() {
		defer close(c.cleared)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(120 * time.Millisecond) // drawing only: the deadline comes from the clock
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-c.done:
				fmt.Fprint(c.out, "\r\033[K")
				return
			case <-t.C:
				left := max(deadline.Sub(c.clock.Now()).Round(time.Second), 0)
				fmt.Fprint(c.out, "\r"+c.style(fmt.Sprintf("%s %s… %s left%s ", frames[i%len(frames)], label, left, hint)))
			}
		}
	}()
}

// Stop ends the countdown and returns once its line is cleared, so what is
// printed next (an error, the success line) never lands on it.
func (c *Countdown) Stop() {
	c.mu.Lock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	on := c.on
	c.mu.Unlock()
	if on {
		<-c.cleared
	}
}
