package conformance

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mcpauth/mcpauth/conformance"
)

// progress shows on stderr what the suite is doing. On a terminal it keeps
// one status line up to date (which checks run, what they wait for); on a
// pipe it stays quiet, except that waits (--real-time) and, with --verbose,
// finished checks are printed as lines so a CI log shows the run is alive.
type progress struct {
	w       io.Writer
	width   int // of the status line: one column short of the terminal's, so it never wraps
	live    bool
	waits   bool
	verbose bool
	total   int

	mu      sync.Mutex
	done    int
	running []string
	shown   bool
}

func newProgress(opts *Options, total int) *progress {
	// A person answering prompts on stderr must not have them overwritten.
	live := opts.IO.StderrTTY && opts.Approve != ApproveManual
	width := opts.IO.Width
	if width == 0 {
		width = 80 // as TerminalWidth assumes for a terminal that did not say
	}
	return &progress{
		w: opts.IO.ErrOut, live: live, total: total, width: max(width-1, 10),
		waits:   !live && (opts.IO.StderrTTY || opts.RealTime || opts.Verbose),
		verbose: !live && opts.Verbose,
	}
}

// report is the suite's OnProgress; checks call it concurrently.
func (p *progress) report(ev conformance.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Event {
	case conformance.EventStart:
		p.running = append(p.running, ev.CheckID)
		p.status("running " + strings.Join(p.running, ", "))
	case conformance.EventWaiting:
		if p.waits {
			fmt.Fprintf(p.w, "%s: %s\n", ev.CheckID, ev.Message)
		}
		p.status(ev.CheckID + ": " + ev.Message)
	case conformance.EventDone:
		p.done++
		if i := slices.Index(p.running, ev.CheckID); i >= 0 {
			p.running = slices.Delete(p.running, i, i+1)
		}
		if p.verbose && ev.Result != nil {
			fmt.Fprintf(p.w, "%-9s %s\n", ev.CheckID, ev.Result.Verdict)
		}
		if len(p.running) > 0 {
			p.status("running " + strings.Join(p.running, ", "))
		}
	}
}

// status rewrites the terminal's status line.
func (p *progress) status(msg string) {
	if !p.live {
		return
	}
	line := fmt.Sprintf("[%d/%d] %s", p.done, p.total, msg)
	if r := []rune(line); len(r) > p.width {
		line = string(r[:p.width-1]) + "…"
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.shown = true
}

// finish clears the status line before the report is printed.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
