package mcpproxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// DefaultBackoff waits about six seconds in all for a server that refuses
// connections (a restart, a redeploy) before the host's call fails.
var DefaultBackoff = []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}

// redialTransport sends a request again, after a pause, when its connection
// was refused. Nothing reached the server then, so even a POST (a tool
// call) is safe to repeat; any other failure is passed on as it is, since
// the server may have acted on the request. An outage is one for all the
// requests in flight: they share one schedule of pauses (one log line per
// pause, not per request), and once it is spent the server counts as down:
// later requests are tried once, without waiting, until one gets through.
type redialTransport struct {
	next    http.RoundTripper
	backoff []time.Duration
	sleep   func(ctx context.Context, d time.Duration) error
	log     func(string, ...any)

	mu      sync.Mutex
	step    int           // pauses taken in this outage
	pause   chan struct{} // closed when the pause in progress ends; nil when none is
	down    bool          // the schedule is spent: no more waiting
	reached bool          // some request got through, ever
	refused bool          // some request was refused, ever
}

func (t *redialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.next.RoundTrip(r)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			t.mu.Lock()
			t.step, t.down = 0, false
			t.reached = t.reached || err == nil
			t.mu.Unlock()
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return resp, err
		}
		if werr := t.wait(req); werr != nil {
			if werr == errServerDown {
				return resp, err
			}
			return nil, werr
		}
	}
}

var errServerDown = errors.New("server down")

// wait joins the outage's pause in progress, or starts the next one; it
// returns errServerDown once the schedule is spent.
func (t *redialTransport) wait(req *http.Request) error {
	t.mu.Lock()
	t.refused = true
	if t.down {
		t.mu.Unlock()
		return errServerDown
	}
	pause := t.pause
	if pause == nil {
		if t.step == len(t.backoff) {
			t.down = true
			t.mu.Unlock()
			t.log("%s: connection refused after %d pauses; failing requests until it answers again", req.URL.Redacted(), len(t.backoff))
			return errServerDown
		}
		d := t.backoff[t.step]
		t.step++
		pause = make(chan struct{})
		t.pause = pause
		t.log("%s: connection refused; trying again in %s (%d of %d)", req.URL.Redacted(), d, t.step, len(t.backoff))
		go func() {
			_ = t.sleep(context.Background(), d) // bounded by d; requests leave on their own contexts
			t.mu.Lock()
			t.pause = nil
			t.mu.Unlock()
			close(pause)
		}()
	}
	t.mu.Unlock()
	select {
	case <-pause:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

// neverReached reports an outage that lasted the whole session: requests
// were refused and none ever got through.
func (t *redialTransport) neverReached() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused && !t.reached
}

func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
