package bench

import (
	"context"
	"slices"
	"sync"
	"time"
)

// An open-loop load generator: requests are due at a fixed rate whatever
// the server's answers, as polls from many independent devices are, and
// each latency runs from when its request was due. A server that stalls
// thus shows its stall in every request that fell due meanwhile, rather
// than in the one a closed loop would have waiting (coordinated omission).

// timed is one request of an open-loop run.
type timed struct {
	due  time.Time     // when it was due; it left at most a few ms later unless every worker was busy
	took time.Duration // from due to the answer
	err  error
}

// openLoopWorkers bounds the requests in flight: as many as the scale
// modes' connections.
const openLoopWorkers = scaleConns

// openLoop sends do rate times a second for d, or until ctx ends. A request
// cut off by that end is no sample. The results are in no particular order.
func openLoop(ctx context.Context, rate int, d time.Duration, do func(context.Context) error) []timed {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	due := make(chan time.Time, max(rate, 1)) // a second of backlog before the dispatcher waits too
	var mu sync.Mutex
	var all []timed
	var wg sync.WaitGroup
	for range openLoopWorkers {
		wg.Go(func() {
			var local []timed
			for at := range due {
				err := do(ctx)
				if ctx.Err() != nil {
					continue // the run's end cut it off
				}
				local = append(local, timed{due: at, took: time.Since(at), err: err})
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		})
	}
	start := time.Now()
	interval := time.Second / time.Duration(max(rate, 1))
	for k := 0; ; k++ {
		at := start.Add(time.Duration(k) * interval)
		if wait := time.Until(at); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case due <- at:
		case <-ctx.Done():
		}
	}
	close(due)
	wg.Wait()
	return all
}

// latencies are the sorted latencies of rs that pass keep, and how many of
// those failed.
func latencies(rs []timed, keep func(timed) bool) (sorted []time.Duration, errs int) {
	for _, r := range rs {
		if keep(r) {
			sorted = append(sorted, r.took)
			if r.err != nil {
				errs++
			}
		}
	}
	slices.Sort(sorted)
	return sorted, errs
}
