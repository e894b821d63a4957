package storetest

import (
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
)

func testCounters(t *testing.T, s store.Store) {
	ctx := t.Context()
	if v, err := s.AddCounter(ctx, "c", 0); err != nil || v != 0 {
		t.Fatalf("reading a new counter = %d, %v; want 0", v, err)
	}
	if v, err := s.AddCounter(ctx, "c", 600000); err != nil || v != 600000 {
		t.Fatalf("AddCounter(600000) = %d, %v", v, err)
	}
	if v, err := s.AddCounter(ctx, "c", -1); err != nil || v != 599999 {
		t.Fatalf("AddCounter(-1) = %d, %v", v, err)
	}
	if v, err := s.AddCounter(ctx, "other", 0); err != nil || v != 0 {
		t.Fatalf("counters are not independent: other = %d, %v", v, err)
	}
	// Large values (offsets in ms of a year and more) survive.
	if v, err := s.AddCounter(ctx, "big", 1<<40); err != nil || v != 1<<40 {
		t.Fatalf("AddCounter(1<<40) = %d, %v", v, err)
	}
}

// No increment is lost when many callers add at once.
func testConcurrentCounter(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := s.AddCounter(ctx, "race", 3); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AddCounter: %v", err)
	}
	if v, err := s.AddCounter(ctx, "race", 0); err != nil || v != 3*n {
		t.Fatalf("after %d concurrent adds of 3: %d, %v; want %d", n, v, err, 3*n)
	}
}
