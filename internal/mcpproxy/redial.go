package mcpproxy

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"time"
)

// DefaultBackoff waits about six seconds in all for a server that refuses
// connections (a restart, a redeploy) before the host's call fails.
var DefaultBackoff = []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}

// redialTransport sends a request again, after a pause, when its connection
// was refused. Nothing reached the server then, so even a POST (a tool
// call) is safe to repeat; any other failure is passed on as it is, since
// the server may have acted on the request.
type redialTransport struct {
	next    http.RoundTripper
	backoff []time.Duration
	sleep   func(ctx context.Context, d time.Duration) error
	log     func(string, ...any)
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
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || attempt == len(t.backoff) ||
			(req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			return resp, err
		}
		d := t.backoff[attempt]
		t.log("%s: connection refused; trying again in %s (%d of %d)", req.URL.Redacted(), d, attempt+1, len(t.backoff))
		if err := t.sleep(req.Context(), d); err != nil {
			return nil, err
		}
	}
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
