package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// Under many more concurrent requests than its cap, the store never has
// more backends open on its database than the cap, and every request
// succeeds: the rest wait in the process. Without a cap database/sql
// started a backend per query in flight, until PostgreSQL's max_connections
// refused them.
func TestPostgresOpenConnectionsCapped(t *testing.T) {
	const conns, workers, rounds = 4, 48, 6
	dsn := pgtest.FreshDB(t)
	s, err := OpenWith(t.Context(), dsn, Options{PostgresMaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	var peak atomic.Int64
	stopSampling := sampleBackends(t, dsn, &peak)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				if err := mixedRequests(t.Context(), s, fmt.Sprintf("%d-%d", w, r)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range rounds {
			if _, err := s.GC(t.Context(), pacingNow); err != nil { // collects nothing in use
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	stopSampling()

	st := s.db.Stats()
	t.Logf("backends at most %d; pool %+v", peak.Load(), st)
	if got := peak.Load(); got > conns || got == 0 {
		t.Errorf("%d backends open on the store's database at once, want 1 to %d", got, conns)
	}
	if st.WaitCount == 0 {
		t.Errorf("no request ever waited for a connection: the load did not exceed the cap (%+v)", st)
	}
}

// sampleBackends counts, every few milliseconds until the returned stop,
// the client backends connected to dsn's database, keeping the highest
// count in peak. It connects to the server's base database, so it is not
// among them.
func sampleBackends(t *testing.T, dsn string, peak *atomic.Int64) (stop func()) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin.SetMaxOpenConns(1)
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var n int64
			err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = $1 AND backend_type = 'client backend'`, name).Scan(&n)
			if err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
			if n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() { cancel(); <-done }
}

// mixedRequests makes the store calls of a device flow, a code exchange and
// a refresh, reads and writes, plain, grouped and in transactions; id makes
// its records its own.
func mixedRequests(ctx context.Context, s *Store, id string) error {
	now := pacingNow
	d := store.DeviceCode{Hash: "d" + id, UserCodeHash: "u" + id, ClientID: "client-1", Status: store.DevicePending,
		Interval: 5 * time.Second, CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}
	if err := s.CreateDeviceCode(ctx, d); err != nil {
		return err
	}
	for _, status := range []store.DeviceStatus{store.DevicePending, store.DeviceApproved} {
		if _, err := s.UpdateDeviceCode(ctx, d.Hash, func(d store.DeviceCode) (store.DeviceCode, error) {
			d.LastPollAt, d.Status = d.LastPollAt.Add(5*time.Second), status
			return d, nil
		}); err != nil {
			return err
		}
	}
	c := store.AuthCode{Hash: "c" + id, ClientID: "client-1", RedirectURI: "http://127.0.0.1/cb", CodeChallenge: "x",
		UserID: "user-1", CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	if err := s.CreateAuthCode(ctx, c); err != nil {
		return err
	}
	if _, err := s.ConsumeAuthCode(ctx, c.Hash, store.Redemption{ClientID: c.ClientID, RedirectURI: c.RedirectURI,
		CodeChallenge: c.CodeChallenge, Now: now, TokenID: "t" + id, TokenExp: now.Add(time.Hour)}); err != nil {
		return err
	}
	r := store.RefreshToken{Hash: "r" + id, FamilyID: "f" + id, ClientID: "client-1", UserID: "user-1",
		ExpiresAt: now.Add(24 * time.Hour), CreatedAt: now, TokenID: "f" + id, TokenExp: now.Add(time.Hour)}
	if err := s.CreateRefreshToken(ctx, r); err != nil {
		return err
	}
	next := r
	next.Hash, next.TokenID = "r2:"+id, "t2:"+id
	if _, err := s.RotateRefreshToken(ctx, r.Hash, next, now, nil); err != nil {
		return err
	}
	if _, err := s.RevokeRefreshFamily(ctx, r.FamilyID); err != nil {
		return err
	}
	if revoked, err := s.IsTokenRevoked(ctx, next.TokenID); err != nil || !revoked {
		return fmt.Errorf("%s revoked: %v, %v", next.TokenID, revoked, err)
	}
	_, err := s.AddCounter(ctx, "requests", 1)
	return err
}

// With a single connection every store operation still completes: no path
// holds a connection while it waits for a second one, which would wait
// forever once the pool is full.
func TestContractPostgresOneConnection(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := OpenWith(t.Context(), pgtest.FreshDB(t), Options{PostgresMaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
