package sqlstore

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// createPending stores a pending device code under each hash (user code
// hash "uc-"+hash), live for 900 s from now.
// pacingNow is when the pacing tests' codes are created and polled.
var pacingNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// twoInstances opens two stores on one fresh PostgreSQL database, as two
// instances of the server, with pending device codes under hashes created
// through the first.
func twoInstances(t *testing.T, hashes ...string) (a, b *Store) {
	t.Helper()
	dsn := pgtest.FreshDB(t)
	a, b = openPostgresTest(t, dsn), openPostgresTest(t, dsn)
	createPending(t, a, pacingNow, hashes...)
	return a, b
}

func createPending(t *testing.T, s *Store, now time.Time, hashes ...string) {
	t.Helper()
	for _, h := range hashes {
		if err := s.CreateDeviceCode(t.Context(), store.DeviceCode{Hash: h, UserCodeHash: "uc-" + h, ClientID: "client-1", Scope: "mcp",
			Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: now, ExpiresAt: now.Add(900 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
}

// approve approves the device code under hash for user-1, as the device
// page does.
func approve(t *testing.T, s *Store, hash string) {
	t.Helper()
	if _, err := s.UpdateDeviceCode(t.Context(), hash, func(d store.DeviceCode) (store.DeviceCode, error) {
		d.Status, d.UserID = store.DeviceApproved, "user-1"
		return d, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// On SQLite a poll's pacing lives in memory: a restart forgets it (pacing
// starts over), while the status, written durably, survives.
func TestPacingIsNotDurableOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	ctx := t.Context()
	now := pacingNow
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	createPending(t, s, now, "dc-polled", "dc-approved")
	poll := func(d store.DeviceCode) (store.DeviceCode, error) {
		d.LastPollAt, d.Interval = now.Add(time.Second), d.Interval+5*time.Second
		return d, nil
	}
	if _, err := s.UpdateDeviceCode(ctx, "dc-polled", poll); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDeviceCode(ctx, "dc-polled"); got.Interval != 10*time.Second || !got.LastPollAt.Equal(now.Add(time.Second)) {
		t.Fatalf("pacing not visible in this process: %+v", got)
	}
	// A poll, then an approval: the approval's durable write carries the pacing.
	if _, err := s.UpdateDeviceCode(ctx, "dc-approved", poll); err != nil {
		t.Fatal(err)
	}
	approve(t, s, "dc-approved")
	s.Close()

	s, err = OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetDeviceCode(ctx, "dc-polled")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DevicePending || got.Interval != 5*time.Second || !got.LastPollAt.IsZero() {
		t.Errorf("after a restart the poll's pacing should be forgotten, the code still pending: %+v", got)
	}
	got, err = s.GetDeviceCode(ctx, "dc-approved")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DeviceApproved || got.UserID != "user-1" || got.Interval != 10*time.Second {
		t.Errorf("the approval (with the pacing it carried) should survive a restart: %+v", got)
	}
}

// Polls after the first are served from memory, not the table: an approval
// between them, a replaced record and GC must still show on the next update.
func TestPolledRowFromMemoryStaysCoherent(t *testing.T) {
	ctx := t.Context()
	now := pacingNow
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "mcpauth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := store.DeviceCode{Hash: "dc", UserCodeHash: "uc", ClientID: "client-1", Scope: "mcp",
		Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
	if err := s.CreateDeviceCode(ctx, d); err != nil {
		t.Fatal(err)
	}
	update := func(f func(*store.DeviceCode)) store.DeviceCode {
		t.Helper()
		got, err := s.UpdateDeviceCode(ctx, "dc", func(d store.DeviceCode) (store.DeviceCode, error) { f(&d); return d, nil })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	update(func(d *store.DeviceCode) { d.LastPollAt = now.Add(time.Second) })
	update(func(d *store.DeviceCode) { d.Status, d.UserID = store.DeviceApproved, "u1" })
	if got := update(func(*store.DeviceCode) {}); got.Status != store.DeviceApproved || got.UserID != "u1" {
		t.Fatalf("after approval, read %+v", got)
	}
	// A replaced (expired) record: the next update sees the new one.
	update(func(d *store.DeviceCode) { d.LastPollAt = now.Add(2 * time.Second) })
	later := now.Add(2 * time.Minute)
	d.ClientID, d.CreatedAt, d.ExpiresAt, d.Status = "client-2", later, later.Add(time.Minute), store.DevicePending
	if err := s.CreateDeviceCode(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got := update(func(d *store.DeviceCode) { d.LastPollAt = later }); got.ClientID != "client-2" || got.Status != store.DevicePending {
		t.Fatalf("after replacement, read %+v", got)
	}
	if _, err := s.GC(ctx, later.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDeviceCode(ctx, "dc", func(d store.DeviceCode) (store.DeviceCode, error) { return d, nil }); err == nil {
		t.Fatal("a collected record was still updated")
	}
}

// On PostgreSQL an instance's first poll of a code writes its pacing, so
// the other instances pace from it (a poll there right after it is too
// fast); its next polls, answered from memory, write nothing; a raised
// interval (slow_down) is written, at most once an interval; none moves
// the version, and an approval's durable write carries the pacing with it.
func TestPostgresPacingShared(t *testing.T) {
	a, b := twoInstances(t, "dc")
	storetest.Watch(t, a)
	ctx := t.Context()
	now := pacingNow
	poll := func(s *Store, at time.Time, interval time.Duration) {
		t.Helper()
		if _, err := s.UpdateDeviceCode(ctx, "dc", func(d store.DeviceCode) (store.DeviceCode, error) {
			d.LastPollAt, d.Interval = at, interval
			return d, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(what string, last time.Time, interval time.Duration) {
		t.Helper()
		got, err := b.GetDeviceCode(ctx, "dc")
		if err != nil || got.Interval != interval || !got.LastPollAt.Equal(last) {
			t.Errorf("%s: the other instance reads last poll %v, interval %v (%v); want %v, %v", what, got.LastPollAt, got.Interval, err, last, interval)
		}
	}
	poll(a, now.Add(time.Second), 5*time.Second)
	stored("after the first poll on A", now.Add(time.Second), 5*time.Second)
	if _, _, ok := a.paced.get("dc"); !ok {
		t.Fatal("A does not answer the code from memory after its first poll")
	}
	poll(a, now.Add(7*time.Second), 5*time.Second)
	stored("after a poll answered from memory", now.Add(time.Second), 5*time.Second)
	poll(a, now.Add(8*time.Second), 10*time.Second)
	stored("after a slow_down on A", now.Add(8*time.Second), 10*time.Second)
	poll(a, now.Add(9*time.Second), 15*time.Second)
	stored("after a second slow_down within the interval", now.Add(8*time.Second), 10*time.Second)
	poll(a, now.Add(23*time.Second), 20*time.Second) // 8 s + the 15 s in force
	stored("after a slow_down an interval after the last written", now.Add(23*time.Second), 20*time.Second)
	var version int64
	if err := a.db.QueryRowContext(ctx, `SELECT version FROM device_codes WHERE hash = 'dc'`).Scan(&version); err != nil || version != 0 {
		t.Errorf("version %d, %v after polls; want 0: a pacing write leaves other instances' copies current", version, err)
	}
	approve(t, b, "dc")
	if got, err := b.GetDeviceCode(ctx, "dc"); err != nil || got.Status != store.DeviceApproved || got.Interval != 20*time.Second {
		t.Errorf("after the approval the other instance reads %+v, %v; want it approved with the pacing it carried", got, err)
	}
}

// A poll that read the row before another instance approved it answers
// from that read (pending), writes nothing, so cannot undo the approval;
// the next poll reads the approval. The same for a code another instance
// collected. Here no listener runs: every poll reads the table.
func TestPostgresUnsyncedPollReadsTable(t *testing.T) {
	a, b := twoInstances(t, "dc", "dc-gone")
	ctx := t.Context()
	now := pacingNow
	var saw []store.DeviceStatus
	poll := func(d store.DeviceCode) (store.DeviceCode, error) {
		saw = append(saw, d.Status)
		if d.Status == store.DevicePending {
			d.LastPollAt = d.LastPollAt.Add(time.Second)
		}
		if len(saw) == 2 {
			approve(t, b, "dc")
		}
		return d, nil
	}
	for range 2 {
		if _, err := a.UpdateDeviceCode(ctx, "dc", poll); err != nil {
			t.Fatal(err)
		}
	}
	if stored, err := b.GetDeviceCode(ctx, "dc"); err != nil || stored.Status != store.DeviceApproved {
		t.Errorf("stored %+v, %v; want the approval to stand", stored, err)
	}
	got, err := a.UpdateDeviceCode(ctx, "dc", poll)
	if err != nil || got.Status != store.DeviceApproved || len(saw) != 3 || saw[1] != store.DevicePending {
		t.Errorf("poll after another instance's approval: %+v, %v (fn saw %v); want the approval read", got, err, saw)
	}

	if _, err := a.UpdateDeviceCode(ctx, "dc-gone", poll); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GC(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	expired := func(d store.DeviceCode) (store.DeviceCode, error) { return d, errors.New("expired") }
	if _, err := a.UpdateDeviceCode(ctx, "dc-gone", expired); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a code another instance collected: %v, want not found", err)
	}
}
