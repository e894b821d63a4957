package clierr

import (
	"context"
	"errors"
	"sync"
)

// Phase records what a command is doing, so an interruption can say what
// it interrupted. Safe for concurrent use (flows call back on goroutines).
type Phase struct {
	mu   sync.Mutex
	what string
}

// Set records the current step, e.g. "waiting for the browser".
func (p *Phase) Set(what string) {
	p.mu.Lock()
	p.what = what
	p.mu.Unlock()
}

func (p *Phase) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.what
}

// Cancelled turns an error caused by ctx's cancellation (Ctrl-C) into
// "<verb> cancelled while <phase>" with exit 130, instead of the bare
// "context canceled". Other errors pass through.
func Cancelled(ctx context.Context, verb string, phase *Phase, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	msg := verb + " cancelled"
	if w := phase.get(); w != "" {
		msg += " while " + w
	}
	return WithExit(ExitCancelled, errors.New(msg))
}
