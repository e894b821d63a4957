package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

func newDevice(hash, userCodeHash string) store.DeviceCode {
	return store.DeviceCode{
		Hash:         hash,
		UserCodeHash: userCodeHash,
		ClientID:     "client-1",
		Scope:        "mcp",
		Status:       store.DevicePending,
		Interval:     5 * time.Second,
		CreatedAt:    base,
		ExpiresAt:    base.Add(900 * time.Second),
	}
}

func testDeviceCodes(t *testing.T, s store.Store) {
	ctx := t.Context()
	d := newDevice("dc-1", "uc-1")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
	stored(t, "GetDeviceCode", s.GetDeviceCode, d.Hash, d, normDevice)
	stored(t, "GetDeviceCodeByUserCode", s.GetDeviceCodeByUserCode, d.UserCodeHash, d, normDevice)

	// Either key taken by a live record blocks the insert, which writes nothing.
	later := base.Add(time.Minute)
	dupHash := newDevice("dc-1", "uc-2")
	dupHash.CreatedAt = later
	wantErr(t, "CreateDeviceCode same hash", s.CreateDeviceCode(ctx, dupHash), store.ErrAlreadyExists)
	absent(t, "GetDeviceCodeByUserCode after failed insert", s.GetDeviceCodeByUserCode, "uc-2")

	dupUser := newDevice("dc-2", "uc-1")
	dupUser.CreatedAt = later
	wantErr(t, "CreateDeviceCode same user code", s.CreateDeviceCode(ctx, dupUser), store.ErrAlreadyExists)
	absent(t, "GetDeviceCode after failed insert", s.GetDeviceCode, "dc-2")

	stored(t, "GetDeviceCode after failed inserts", s.GetDeviceCode, d.Hash, d, normDevice)

	absent(t, "GetDeviceCode unknown", s.GetDeviceCode, "no-such-code")
	absent(t, "GetDeviceCodeByUserCode unknown", s.GetDeviceCodeByUserCode, "no-such-user-code")
}

// testDeviceCodeReuse: a record is live until its ExpiresAt; from then on
// (judged at the new record's CreatedAt) its user code may be issued again,
// and the expired record is replaced.
func testDeviceCodeReuse(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := newDevice("dc-old", "uc-1")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, old))

	early := newDevice("dc-new", "uc-1")
	early.CreatedAt = old.ExpiresAt.Add(-time.Millisecond)
	early.ExpiresAt = early.CreatedAt.Add(900 * time.Second)
	wantErr(t, "CreateDeviceCode before expiry", s.CreateDeviceCode(ctx, early), store.ErrAlreadyExists)

	fresh := newDevice("dc-new", "uc-1")
	fresh.CreatedAt = old.ExpiresAt
	fresh.ExpiresAt = fresh.CreatedAt.Add(900 * time.Second)
	must(t, "CreateDeviceCode at expiry", s.CreateDeviceCode(ctx, fresh))
	stored(t, "GetDeviceCodeByUserCode", s.GetDeviceCodeByUserCode, "uc-1", fresh, normDevice)
	absent(t, "GetDeviceCode replaced", s.GetDeviceCode, old.Hash)
}

func testUpdateDeviceCode(t *testing.T, s store.Store) {
	ctx := t.Context()
	d := newDevice("dc-1", "uc-1")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))

	want := d
	want.Status, want.UserID = store.DeviceApproved, "user-1"
	want.Interval, want.LastPollAt = 10*time.Second, base.Add(7*time.Second)
	calls := 0
	got, err := s.UpdateDeviceCode(ctx, d.Hash, func(cur store.DeviceCode) (store.DeviceCode, error) {
		calls++
		same(t, "fn argument", cur, d, normDevice)
		cur.Status, cur.UserID = want.Status, want.UserID
		cur.Interval, cur.LastPollAt = want.Interval, want.LastPollAt
		cur.Hash, cur.UserCodeHash = "dc-hijack", "uc-hijack" // must be ignored
		return cur, nil
	})
	must(t, "UpdateDeviceCode", err)
	if calls != 1 {
		t.Errorf("fn called %d times without contention, want 1", calls)
	}
	same(t, "UpdateDeviceCode result", got, want, normDevice)
	stored(t, "GetDeviceCode after update", s.GetDeviceCode, d.Hash, want, normDevice)
	stored(t, "GetDeviceCodeByUserCode after update", s.GetDeviceCodeByUserCode, d.UserCodeHash, want, normDevice)
	absent(t, "GetDeviceCode of changed hash", s.GetDeviceCode, "dc-hijack")
	absent(t, "GetDeviceCodeByUserCode of changed user code", s.GetDeviceCodeByUserCode, "uc-hijack")
}

func testUpdateDeviceCodeErrors(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.UpdateDeviceCode(ctx, "no-such-code", func(d store.DeviceCode) (store.DeviceCode, error) {
		t.Error("fn called for an unknown hash")
		return d, nil
	})
	wantErr(t, "UpdateDeviceCode unknown", err, store.ErrNotFound)

	d := newDevice("dc-1", "uc-1")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
	errSlowDown := errors.New("slow down")
	_, err = s.UpdateDeviceCode(ctx, d.Hash, func(cur store.DeviceCode) (store.DeviceCode, error) {
		cur.Status, cur.Interval = store.DeviceSpent, time.Hour // must not be written
		return cur, errSlowDown
	})
	if err != errSlowDown { // "returned as is": the very same value, not a wrapper
		t.Errorf("UpdateDeviceCode returned %v, want fn's error as is", err)
	}
	stored(t, "GetDeviceCode after failed fn", s.GetDeviceCode, d.Hash, d, normDevice)
}
