package server

// What naming metadata document URLs can make the server do is bounded
// (issue 30): anyone may name any URL, so without bounds the server is a
// free request reflector. A failed document is remembered for a while,
// concurrent requests for one URL share one fetch, each caller IP has a
// fetch budget, and fetches in flight across the server are capped.

import (
	"net/http"
	"sync"
	"time"
)

const (
	cimdDefaultFailureCache = time.Minute
	cimdDefaultMaxFetches   = 8
	cimdDefaultSlotWait     = 2 * time.Second
)

// cimdUnavailableError says a document was not fetched because a bound was
// reached: nothing is known about the document, so it is neither cached
// nor reported as invalid, and the caller may retry.
type cimdUnavailableError struct {
	busy bool          // all fetch slots were taken; else the caller's budget is spent
	wait time.Duration // until a retry may succeed
}

func (e *cimdUnavailableError) Error() string {
	if e.busy {
		return "client metadata document: every fetch slot is taken"
	}
	return "client metadata document: the caller's fetch budget is spent"
}

// oauthError is the answer: 429 rate_limited for a spent budget, as every
// limit of this server; 503 temporarily_unavailable for a full server.
func (e *cimdUnavailableError) oauthError() *oauthError {
	var oe *oauthError
	if e.busy {
		oe = newError(http.StatusServiceUnavailable, errTemporarilyUnavailable, "the server is fetching too many client metadata documents; retry shortly")
	} else {
		oe = newError(http.StatusTooManyRequests, errRateLimited, "too many client metadata documents fetched for this address; retry later")
	}
	oe.RetryAfter = e.wait
	return oe
}

// pageError is the same answer on the authorization page.
func (e *cimdUnavailableError) pageError() *pageError {
	oe := e.oauthError()
	msg := "This server is asked for too many application documents from your address. Wait a moment and try again."
	if e.busy {
		msg = "This server is busy fetching other applications' documents. Wait a moment and try again."
	}
	return &pageError{Status: oe.Status, Title: "Try again in a moment", Message: msg, Code: oe.Code, RetryAfter: oe.RetryAfter}
}

// fetchSlots caps the fetches in flight across the server. A fetch that
// finds every slot taken waits a little, then gives up: a slot is held for
// at most one fetch timeout, so waiting longer would only pile up requests.
type fetchSlots struct {
	ch   chan struct{}
	wait time.Duration
	busy func() // counts refusals (metrics)
}

func newFetchSlots(n int, wait time.Duration, busy func()) *fetchSlots {
	if n <= 0 {
		n = cimdDefaultMaxFetches
	}
	if wait <= 0 {
		wait = cimdDefaultSlotWait
	}
	if busy == nil {
		busy = func() {}
	}
	return &fetchSlots{ch: make(chan struct{}, n), wait: wait, busy: busy}
}

// acquire takes a slot, waiting at most s.wait; release gives it back.
func (s *fetchSlots) acquire() (release func(), err error) {
	select {
	case s.ch <- struct{}{}:
		return s.release, nil
	default:
	}
	// A wall-clock timer, not the server's clock: it bounds real waiting,
	// as the fetch timeout does, and decides nothing about expiry.
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case s.ch <- struct{}{}:
		return s.release, nil
	case <-t.C:
		s.busy()
		return nil, &cimdUnavailableError{busy: true, wait: time.Second}
	}
}

func (s *fetchSlots) release() { <-s.ch }

// failureCache remembers why a document URL failed (fetch error, status,
// content, validation) until a deadline on the server's clock, so naming
// a failing URL again costs no fetch. Per instance, in memory.
type failureCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]cachedFailure
}

type cachedFailure struct {
	err   error
	until time.Time
}

func newFailureCache(ttl time.Duration) *failureCache {
	if ttl <= 0 {
		ttl = cimdDefaultFailureCache
	}
	return &failureCache{ttl: ttl, m: map[string]cachedFailure{}}
}

// get returns the failure remembered for url at now, or nil.
func (c *failureCache) get(url string, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[url]
	if !ok {
		return nil
	}
	if !now.Before(f.until) {
		delete(c.m, url)
		return nil
	}
	return f.err
}

// put remembers err for url from now. The map is bounded as the rate
// limiters' are: expired entries go first, then everything.
func (c *failureCache) put(url string, err error, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxKeys {
		for k, f := range c.m {
			if !now.Before(f.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxKeys {
			clear(c.m)
		}
	}
	c.m[url] = cachedFailure{err: err, until: now.Add(c.ttl)}
}
