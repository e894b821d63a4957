package sqlstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// On SQLite a poll's pacing lives in memory: a restart forgets it (pacing
// starts over), while the status, written durably, survives.
func TestPacingIsNotDurableOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	ctx := t.Context()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"dc-polled", "dc-approved"} {
		if err := s.CreateDeviceCode(ctx, store.DeviceCode{Hash: h, UserCodeHash: "uc-" + h, ClientID: "client-1", Scope: "mcp",
			Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: now, ExpiresAt: now.Add(900 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
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
	if _, err := s.UpdateDeviceCode(ctx, "dc-approved", func(d store.DeviceCode) (store.DeviceCode, error) {
		d.Status, d.UserID = store.DeviceApproved, "user-1"
		return d, nil
	}); err != nil {
		t.Fatal(err)
	}
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
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
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
