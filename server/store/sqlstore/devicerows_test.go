package sqlstore

import (
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// pollStatus polls hash on s as the server does while it is pending, and
// returns the status the poll was answered from.
func pollStatus(t *testing.T, s *Store, hash string) store.DeviceStatus {
	t.Helper()
	got, err := s.UpdateDeviceCode(t.Context(), hash, func(d store.DeviceCode) (store.DeviceCode, error) {
		if d.Status == store.DevicePending {
			d.LastPollAt = d.LastPollAt.Add(time.Second)
		}
		return d, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status
}

// untilApproved polls hash on s until a poll sees it approved, and returns
// how long that took; it fails the test after bound.
func untilApproved(t *testing.T, s *Store, hash string, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for pollStatus(t, s, hash) != store.DeviceApproved {
		if time.Since(start) > bound {
			t.Fatalf("%s: still pending on the polled instance %v after its approval", hash, bound)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// A pending code B answers polls for from memory is seen approved by B's
// next poll once A's approval is heard of: the notification drops B's
// copy. Bound: twice the listener's heartbeat, far above the milliseconds
// a notification takes.
func TestPostgresPolledRowHearsApproval(t *testing.T) {
	hashes := []string{"dc-0", "dc-1", "dc-2", "dc-3", "dc-4", "dc-5", "dc-6", "dc-7", "dc-8", "dc-9"}
	a, b := twoInstances(t, hashes...)
	storetest.Watch(t, b)
	var took []time.Duration
	for _, h := range hashes {
		pollStatus(t, b, h)
		if _, _, ok := b.paced.get(h); !ok {
			t.Fatalf("%s: B does not answer from memory after polling it", h)
		}
		approve(t, a, h)
		took = append(took, untilApproved(t, b, h, 2*(heartbeatIdle+heartbeatTimeout)))
	}
	slices.Sort(took)
	t.Logf("approval on A seen by B's poll after: median %v, worst %v", took[len(took)/2], took[len(took)-1])
}

// The same after B's listener connection was cut (its backend terminated
// just before the approval, whose notification is then lost): B reads the
// table until it listens again, and then trusts no row read before.
func TestPostgresPolledRowAfterCut(t *testing.T) {
	a, b := twoInstances(t, "dc")
	rec := storetest.Watch(t, b)
	pollStatus(t, b, "dc")
	pid := b.watch.pid.Load()
	if _, err := a.db.ExecContext(t.Context(), "SELECT pg_terminate_backend($1)", int(pid)); err != nil {
		t.Fatal(err)
	}
	approve(t, a, "dc")
	took := untilApproved(t, b, "dc", 5*time.Second)
	t.Logf("approval on A right after B's listener was cut, seen by B's poll after %v", took)
	rec.Expect(t, "resynced", 5*time.Second)
	if b.watch.pid.Load() == pid {
		t.Fatal("resynced on the terminated backend")
	}
}

// Changes no notification tells of (the trigger disabled, as if lost): B
// keeps answering from its copy while synced, which is why the trigger is
// needed; reads the table while its listener is cut off (a silent
// partition here); and after resyncing trusts no row read before.
func TestPostgresPolledRowMissedChange(t *testing.T) {
	a, b := twoInstances(t, "dc-unsynced", "dc-resynced")
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startBlackholeProxy(t, u.Host)
	b.watch.dialAddrOverride = p.addr()
	rec := storetest.Watch(t, b)
	ctx := t.Context()
	if _, err := a.db.ExecContext(ctx, `ALTER TABLE device_codes DISABLE TRIGGER device_codes_notify`); err != nil {
		t.Fatal(err)
	}
	pollStatus(t, b, "dc-unsynced")
	pollStatus(t, b, "dc-resynced")
	approve(t, a, "dc-unsynced")
	time.Sleep(100 * time.Millisecond)
	if got := pollStatus(t, b, "dc-unsynced"); got != store.DevicePending {
		t.Fatalf("B answered %s from a copy no notification dropped; want pending", got)
	}

	p.frozen.Store(true)
	rec.Expect(t, "unsynced", 5*time.Second)
	if got := pollStatus(t, b, "dc-unsynced"); got != store.DeviceApproved {
		t.Errorf("while unsynced B answered %s; want the approval read from the table", got)
	}
	approve(t, a, "dc-resynced")
	p.frozen.Store(false)
	rec.Expect(t, "resynced", 10*time.Second)
	if got := pollStatus(t, b, "dc-resynced"); got != store.DeviceApproved {
		t.Errorf("after resyncing B answered %s from a row read before; want the approval read", got)
	}
}

// Rows deleted on another instance (GC here) are heard of as one
// notification that distrusts every row, so B's next poll reads the table
// and finds the code gone.
func TestPostgresPolledRowHearsDeletion(t *testing.T) {
	a, b := twoInstances(t, "dc")
	storetest.Watch(t, b)
	pollStatus(t, b, "dc")
	if _, err := a.GC(t.Context(), pacingNow.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		_, err := b.UpdateDeviceCode(t.Context(), "dc", func(d store.DeviceCode) (store.DeviceCode, error) { return d, nil })
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 2*(heartbeatIdle+heartbeatTimeout) {
			t.Fatal("B still answers for a code another instance collected")
		}
		time.Sleep(time.Millisecond)
	}
}
