package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A closed-loop load generator: a fixed number of workers, each sending its
// next request only when the previous answer has been read, over keep-alive
// connections, recording every latency. Closed loop means throughput and
// latency are measured honestly together (no coordinated omission hides
// behind an open-loop rate), and the same generator loads every path.

// errSpent ends a worker: a finite supply (pre-issued codes) is used up.
var errSpent = errors.New("supply spent")

// Result is one path's measurement in one round.
type Result struct {
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	RPS      float64       `json:"rps"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Ratio    float64       `json:"ratio_to_baseline"`

	lat []time.Duration // sorted, for merging slices
}

// merge sums slices of one path's load into one result.
func merge(rs []Result) Result {
	var m Result
	var all []time.Duration
	for _, r := range rs {
		m.Requests += r.Requests
		m.Errors += r.Errors
		m.Elapsed += r.Elapsed
		all = append(all, r.lat...)
	}
	slices.Sort(all)
	if m.Elapsed > 0 {
		m.RPS = float64(m.Requests) / m.Elapsed.Seconds()
	}
	m.P50, m.P99 = quantile(all, 0.50), quantile(all, 0.99)
	return m
}

// load runs do from concurrency workers for d, or until do returns errSpent.
// Every answered call counts with its latency; an error counts as one too.
func load(ctx context.Context, concurrency int, d time.Duration, do func(context.Context) error) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu    sync.Mutex
		all   []time.Duration
		errs  atomic.Int64
		wg    sync.WaitGroup
		start = time.Now()
	)
	for range concurrency {
		wg.Go(func() {
			local := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				err := do(ctx)
				if errors.Is(err, errSpent) {
					break
				}
				if err != nil && ctx.Err() != nil {
					break // cut off by the deadline: neither answer nor error
				}
				local = append(local, time.Since(t0))
				if err != nil {
					errs.Add(1)
				}
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(all)
	r := Result{Requests: len(all), Errors: int(errs.Load()), Elapsed: elapsed, lat: all}
	if elapsed > 0 {
		r.RPS = float64(len(all)) / elapsed.Seconds()
	}
	r.P50, r.P99 = quantile(all, 0.50), quantile(all, 0.99)
	return r
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
