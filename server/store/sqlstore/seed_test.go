package sqlstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// fileStores opens a fresh store on a SQLite file or a PostgreSQL database.
func fileStores() map[string]func(*testing.T) *Store {
	return map[string]func(*testing.T) *Store{
		"SQLite":     func(t *testing.T) *Store { return openFile(t) },
		"PostgreSQL": func(t *testing.T) *Store { return openPostgresTest(t, pgtest.FreshDB(t)) },
	}
}

// Seeded codes, more than one statement's worth, read back as stored, poll
// as created ones do, and GC collects them; a call holding a hash already
// stored fails whole.
func TestInsertDeviceCodes(t *testing.T) {
	for name, open := range fileStores() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			n := seedRowsPerStatement + 7
			ds := make([]store.DeviceCode, n)
			for i := range ds {
				ds[i] = store.DeviceCode{Hash: fmt.Sprintf("h%d", i), UserCodeHash: fmt.Sprintf("u%d", i), ClientID: "client-1", Scope: "mcp",
					Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: pacingNow, ExpiresAt: pacingNow.Add(900 * time.Second)}
			}
			if err := s.InsertDeviceCodes(t.Context(), ds); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetDeviceCode(t.Context(), ds[n-1].Hash)
			if err != nil || got != ds[n-1] {
				t.Fatalf("read back %+v, %v; want %+v", got, err, ds[n-1])
			}
			polled, err := s.UpdateDeviceCode(t.Context(), ds[0].Hash, func(d store.DeviceCode) (store.DeviceCode, error) {
				d.LastPollAt = pacingNow.Add(time.Second)
				return d, nil
			})
			if err != nil || !polled.LastPollAt.Equal(pacingNow.Add(time.Second)) {
				t.Fatalf("poll: %+v, %v", polled, err)
			}
			again := []store.DeviceCode{{Hash: "fresh", UserCodeHash: "fresh-u", ClientID: "client-1", Status: store.DevicePending,
				CreatedAt: pacingNow, ExpiresAt: pacingNow.Add(time.Hour)}, ds[3]}
			if err := s.InsertDeviceCodes(t.Context(), again); !errors.Is(err, store.ErrAlreadyExists) {
				t.Fatalf("a hash already stored: %v, want ErrAlreadyExists", err)
			}
			if _, err := s.GetDeviceCode(t.Context(), "fresh"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the failed call stored part of its codes: %v", err)
			}
			if k, err := s.GC(t.Context(), pacingNow.Add(901*time.Second)); err != nil || k != n {
				t.Errorf("GC collected %d, %v; want %d", k, err, n)
			}
		})
	}
}
