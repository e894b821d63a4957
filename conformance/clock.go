package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// HTTPClock drives the clock of a server started with `mcpauth serve
// --test-clock`: GET URL reports {"now": RFC 3339, "offset_ms": n}; POST URL
// with {"advance": "10m1s"} (a Go duration) moves it and reports the same.
type HTTPClock struct {
	URL  string
	HTTP *http.Client // nil: http.DefaultClient
}

// ClockState is what the clock endpoint reports.
type ClockState struct {
	Now      time.Time `json:"now"`
	OffsetMS int64     `json:"offset_ms"`
}

// Now reads the server's clock.
func (c *HTTPClock) Now(ctx context.Context) (ClockState, error) {
	return c.do(ctx, http.MethodGet, nil)
}

// Advance moves the server's clock forward by d and checks it moved.
func (c *HTTPClock) Advance(ctx context.Context, d time.Duration) error {
	before, err := c.Now(ctx)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"advance": d.String()})
	if err != nil {
		return fmt.Errorf("test clock: %w", err)
	}
	after, err := c.do(ctx, http.MethodPost, body)
	if err != nil {
		return err
	}
	if got := time.Duration(after.OffsetMS-before.OffsetMS) * time.Millisecond; got < d.Truncate(time.Millisecond) {
		return fmt.Errorf("test clock: advanced by %s, offset moved only %s", d, got)
	}
	return nil
}

func (c *HTTPClock) do(ctx context.Context, method string, body []byte) (ClockState, error) {
	var st ClockState
	req, err := http.NewRequestWithContext(ctx, method, c.URL, bytes.NewReader(body))
	if err != nil {
		return st, fmt.Errorf("test clock: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return st, fmt.Errorf("test clock: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return st, fmt.Errorf("test clock: reading response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("test clock: %s %s: HTTP %d %s", method, c.URL, resp.StatusCode, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("test clock: decoding %s: %w", b, err)
	}
	return st, nil
}

// post sends body to the clock as a browser on origin would and returns
// the status, for the check that such requests are refused.
func (c *HTTPClock) post(ctx context.Context, contentType string, body []byte, origin string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("test clock: %w", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Origin", origin)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("test clock: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, nil
}
