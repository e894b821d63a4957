package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// Env is what a running check sees: the target, HTTP helpers and the state
// shared by the checks of one run (registered clients, a token, the API key).
type Env struct {
	Check  Check
	base   string
	target Target
	hc     *http.Client
	opts   *Options
	run    *runState
	// approving counts approver calls in flight, so that a timeout there is
	// told apart from a server that never answered.
	approving atomic.Int32
	// log is the check's HTTP transcript, for the report of a non-pass.
	log transcript
	// ownClient is the client a check that signs in holds while it runs.
	ownClient lazy[string]
}

// runState is shared by the checks of one run and built lazily: a check that
// needs a registered client registers it once for everyone.
type runState struct {
	clients [2]lazy[string]
	offline [2]lazy[string] // clients with the refresh_token grant
	token   lazy[string]
	apiKey  lazy[string]
	session lazy[[]*http.Cookie]
	docs    lazy[*DocumentHost] // the run's own document host, when the target has none
	// The mcp profile's discovery and client.
	site       lazy[*mcpSite]
	mcpClients [2]lazy[string]
	idle       idleClients // clients of checks that signed in and are done
	// secrets are every secret value the run obtained, masked in whatever
	// it reports.
	secrets *redact.Secrets
}

type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
	err  error
}

func (l *lazy[T]) get(ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.v, l.err
	}
	v, err := f(ctx)
	if err != nil && ctx.Err() != nil {
		return v, err // the caller ran out of time; let the next one try again
	}
	l.v, l.err, l.done = v, err, true
	return v, err
}

// peek returns the value if it was built, without building it.
func (l *lazy[T]) peek() (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		var zero T
		return zero, errors.New("not built")
	}
	return l.v, l.err
}

// BaseURL is the target's base URL without a trailing slash.
func (e *Env) BaseURL() string { return e.base }

// URL resolves a path against the base URL; absolute URLs pass through.
func (e *Env) URL(path string) string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return path
	}
	return e.base + path
}

// Progress reports what a long-running check is doing.
func (e *Env) Progress(format string, args ...any) {
	if e.opts.OnProgress != nil {
		e.opts.OnProgress(Progress{CheckID: e.Check.ID, Event: EventWaiting, Message: fmt.Sprintf(format, args...)})
	}
}

// Response is a fully read HTTP response.
type Response struct {
	Method string
	URL    string
	Status int
	Header http.Header
	Body   []byte
	// secrets are the run's, so that a snippet of the body is masked
	// before it is cut (a cut secret is no longer found).
	secrets *redact.Secrets
}

// maxBody bounds every response the suite reads.
const maxBody = 4 << 20

// ContentType is the media type without parameters, lower case.
func (r *Response) ContentType() string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// Snippet is a short description for failure messages: what a token
// answer granted (never the token), or the body on one line with its
// secrets masked.
func (r *Response) Snippet() string {
	if g := grantedToken(r.Status, r.Body); g != "" {
		return fmt.Sprintf("HTTP %d that %s", r.Status, g)
	}
	body := r.Body
	var compact bytes.Buffer
	if json.Compact(&compact, body) == nil {
		body = compact.Bytes()
	}
	b := r.secrets.Mask(strings.Join(strings.Fields(string(body)), " "))
	if len(b) > 160 {
		b = b[:160] + "…"
	}
	if b == "" {
		b = "(empty body)"
	}
	return fmt.Sprintf("HTTP %d %s", r.Status, b)
}

// JSON decodes the body into v.
func (r *Response) JSON(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("body is not the expected JSON (%v): %s", err, r.Snippet())
	}
	return nil
}

// Do sends a request and reads the whole (bounded) response. Redirects are
// not followed.
func (e *Env) Do(ctx context.Context, method, path string, hdr http.Header, body []byte) (*Response, error) {
	u := e.URL(path)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, u, err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if h := req.Header.Get("Host"); h != "" { // the client sends req.Host, not the header
		req.Host = h
		req.Header.Del("Host")
	}
	hc, rec := e.wire()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	resp.Body.Close()
	return rec.last, nil
}

// wire returns the client the suite's requests go through, its own and those
// flows makes, and the recorder that keeps the last answer read in full.
func (e *Env) wire() (*http.Client, *recorder) {
	next := e.hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	rec := &recorder{e: e, next: next}
	hc := *e.hc
	hc.Transport = rec
	return &hc, rec
}

// recorder is the suite's view of the wire: it keeps the last response, read
// in full, so a check can judge what the server answered to flows; and it
// retries a 429 with a short Retry-After a few times, since rate limits are
// not what these checks are about.
type recorder struct {
	e    *Env
	next http.RoundTripper
	last *Response
}

func (rt *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	const attempts = 4
	var sent []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the request to %s: %w", req.URL, err)
		}
		sent = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(sent))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(sent)), nil }
	}
	for i := 0; ; i++ {
		resp, err := rt.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", req.Method, req.URL, err)
		}
		wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode == http.StatusTooManyRequests && i < attempts-1 && err == nil && wait <= 30 &&
			(req.Body == nil || req.GetBody != nil) {
			rt.e.Progress("rate limited at %s %s; retrying in %ds", req.Method, req.URL.Path, wait)
			if err := sleep(req.Context(), time.Duration(wait)*time.Second+100*time.Millisecond); err != nil {
				return nil, err
			}
			if req.GetBody != nil {
				req = req.Clone(req.Context())
				if req.Body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			continue
		}
		rt.last = &Response{Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode, Header: resp.Header, Body: b, secrets: rt.e.run.secrets}
		rt.e.run.learn(req, sent, rt.last)
		rt.e.log.add(newRecord(req, sent, rt.last))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, nil
	}
}

// answer is the response the server gave to a flows call; err, flows' own
// verdict on it, matters only when no response came.
func (rt *recorder) answer(err error) (*Response, error) {
	if rt.last == nil {
		if err == nil {
			err = fmt.Errorf("no response recorded")
		}
		return nil, err
	}
	return rt.last, nil
}

// Get sends a GET with optional header pairs ("Name", "value", ...).
func (e *Env) Get(ctx context.Context, path string, hdr ...string) (*Response, error) {
	return e.Do(ctx, http.MethodGet, path, headers(hdr...), nil)
}

// PostJSON sends v as application/json.
func (e *Env) PostJSON(ctx context.Context, path string, v any) (*Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return e.Do(ctx, http.MethodPost, path, headers("Content-Type", "application/json"), b)
}

// PostRaw sends body with the given content type (none when empty).
func (e *Env) PostRaw(ctx context.Context, path, contentType string, body []byte) (*Response, error) {
	var h http.Header
	if contentType != "" {
		h = headers("Content-Type", contentType)
	}
	return e.Do(ctx, http.MethodPost, path, h, body)
}

// PostForm sends vals as application/x-www-form-urlencoded, authenticated
// as the confidential pre-registered client vals names, if any.
func (e *Env) PostForm(ctx context.Context, path string, vals url.Values) (*Response, error) {
	h := headers("Content-Type", "application/x-www-form-urlencoded")
	vals = e.authenticateForm(vals, h)
	return e.Do(ctx, http.MethodPost, path, h, []byte(vals.Encode()))
}

// GetBearer sends GET path with Authorization: Bearer token.
func (e *Env) GetBearer(ctx context.Context, path, token string) (*Response, error) {
	return e.Get(ctx, path, "Authorization", "Bearer "+token)
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Advance moves the server clock by d, or waits d for real when the run allows
// it. Checks call it only when they declare NeedTimeTravel.
func (e *Env) Advance(ctx context.Context, d time.Duration) error {
	if e.target.Clock != nil {
		if err := e.target.Clock.Advance(ctx, d); err != nil {
			return setupFail("advancing the server clock", err)
		}
		return nil
	}
	if !e.opts.RealTime {
		return Skip("needs a test clock (or real-time waiting)")
	}
	for left := d; left > 0; {
		e.Progress("waiting %s of real time", left.Round(time.Second))
		chunk := min(left, 5*time.Second)
		if err := sleep(ctx, chunk); err != nil {
			return err
		}
		left -= chunk
	}
	return nil
}

// SessionCookies returns the cookies of a logged-in browser session.
func (e *Env) SessionCookies(ctx context.Context) ([]*http.Cookie, error) {
	return e.run.session.get(ctx, func(ctx context.Context) ([]*http.Cookie, error) {
		if len(e.target.Session) > 0 {
			return e.target.Session, nil
		}
		if s, ok := e.target.Approver.(SessionSource); ok {
			cs, err := s.Session(ctx)
			if err != nil {
				return nil, fmt.Errorf("logging in: %w", err)
			}
			e.run.learnCookies(cs)
			return cs, nil
		}
		return nil, Skip("no browser session (give one, or use an approver that can log in)")
	})
}

// hasSession reports whether SessionCookies can be expected to work.
func (t Target) hasSession() bool {
	if len(t.Session) > 0 {
		return true
	}
	_, ok := t.Approver.(SessionSource)
	return ok
}

// cookieHeader renders cookies as a Cookie request header.
func cookieHeader(cs []*http.Cookie) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// approveConsent has the approver sign in and approve authURL for the mcp
// profile, whose sign-in pages no specification describes: when the
// approver cannot get through them (or hangs), the check is inconclusive.
func (e *Env) approveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	e.approving.Add(1)
	defer e.approving.Add(-1)
	u, err := e.approver().ApproveConsent(ctx, authURL)
	if err != nil {
		return nil, approverFail(err)
	}
	return u, nil
}
