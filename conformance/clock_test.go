package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHTTPClock(t *testing.T) {
	// The protocol of `mcpauth serve --test-clock`, as the server speaks it.
	var offset time.Duration
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_clock" {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodPost {
			var req struct{ Advance string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			d, err := time.ParseDuration(req.Advance)
			if err != nil {
				http.Error(w, "bad advance", http.StatusBadRequest)
				return
			}
			offset += d
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"now": t0.Add(offset), "offset_ms": offset.Milliseconds()})
	}))
	defer s.Close()
	c := &HTTPClock{URL: s.URL + "/_clock"}
	ctx := context.Background()
	before, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Advance(ctx, 10*time.Minute+time.Second); err != nil {
		t.Fatal(err)
	}
	after, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Now.Sub(before.Now); got != 10*time.Minute+time.Second {
		t.Errorf("clock moved %s, want 10m1s", got)
	}
	if err := (&HTTPClock{URL: s.URL + "/nope"}).Advance(ctx, time.Second); err == nil {
		t.Errorf("advancing a missing clock endpoint succeeded")
	}
}
