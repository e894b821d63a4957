package sqlstore

import (
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// BenchmarkGroupCommit measures refresh rotations (one single-use write
// each, with nothing else per request) by p concurrent callers, group
// committed and, as the baseline, one transaction per write, alternating in
// slices within the same run. ns/op is the grouped path; solo-ns/op the
// baseline; speedup is solo time over grouped time.
func BenchmarkGroupCommit(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(b *testing.B) *Store
	}{
		{"sqlite", func(b *testing.B) *Store { return openFile(b) }},
		{"postgres", func(b *testing.B) *Store { return openPostgresTest(b, pgtest.FreshDB(b)) }},
	} {
		b.Run(db.name, func(b *testing.B) {
			grouped, solo := db.open(b), db.open(b)
			solo.group = nil
			// Both stores at p64 at once would pass PostgreSQL's default
			// max_connections (100); the same bound for both keeps it fair.
			grouped.db.SetMaxOpenConns(40)
			solo.db.SetMaxOpenConns(40)
			for _, p := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) {
					rg, rs := newRotators(b, grouped, p), newRotators(b, solo, p)
					var tg, ts time.Duration
					const slices = 4
					b.ResetTimer()
					for i := range slices {
						n := b.N/slices + boolInt(i < b.N%slices)
						ts += rs.run(b, n)
						tg += rg.run(b, n)
					}
					b.StopTimer()
					b.ReportMetric(float64(tg.Nanoseconds())/float64(b.N), "ns/op")
					b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "solo-ns/op")
					b.ReportMetric(float64(ts)/float64(tg), "speedup")
				})
			}
		})
	}
}

// rotators are p refresh token families, each rotated by its own caller.
type rotators struct {
	s      *Store
	cur    []string
	prefix string       // unique per rotators: runs share a database
	next   atomic.Int64 // successor token names
}

func newRotators(b *testing.B, s *Store, p int) *rotators {
	r := &rotators{s: s, cur: make([]string, p), prefix: rand.Text()}
	for i := range p {
		r.cur[i] = r.name()
		t := store.RefreshToken{Hash: r.cur[i], FamilyID: r.cur[i], ClientID: "c", UserID: "u",
			CreatedAt: groupNow, ExpiresAt: groupNow.Add(time.Hour)}
		if err := s.CreateRefreshToken(b.Context(), t); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

func (r *rotators) name() string {
	return fmt.Sprintf("%s-%d", r.prefix, r.next.Add(1))
}

// run rotates n times in all, spread over the callers, and returns the
// wall time taken.
func (r *rotators) run(b *testing.B, n int) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	var wg sync.WaitGroup
	for i := range r.cur {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				next := store.RefreshToken{Hash: r.name(), CreatedAt: groupNow}
				if _, err := r.s.RotateRefreshToken(b.Context(), r.cur[i], next, groupNow, nil); err != nil {
					b.Error(err)
					return
				}
				r.cur[i] = next.Hash
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
