package sqlstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// seedDeviceCodes stores expired device codes expiring at pacingNow+900 s
// and live ones an hour later.
func seedDeviceCodes(t *testing.T, s *Store, expired, live int) {
	t.Helper()
	ds := make([]store.DeviceCode, 0, expired+live)
	for i := range expired + live {
		exp := pacingNow.Add(900 * time.Second)
		if i >= expired {
			exp = exp.Add(time.Hour)
		}
		ds = append(ds, store.DeviceCode{Hash: fmt.Sprintf("h%d", i), UserCodeHash: fmt.Sprintf("u%d", i), ClientID: "client-1",
			Status: store.DevicePending, Interval: 5 * time.Second, CreatedAt: pacingNow, ExpiresAt: exp})
	}
	if err := s.InsertDeviceCodes(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
}

// countExpired counts the device codes seedDeviceCodes made expired.
func countExpired(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(t.Context(), s.d.rebind(`SELECT COUNT(*) FROM device_codes WHERE expires_at < ?`),
		ms(pacingNow.Add(901*time.Second))).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// On SQLite writes issued while GC collects many expired rows get the
// write lock between GC's batches: a writer creating device codes one after
// another through the collection sees, after its writes, the expired rows
// go down batch by batch. With one DELETE (which held the lock for seconds
// on a million rows) every write waited for all of it, and saw all the
// expired rows or none.
func TestGCLetsWritesInBetweenBatches(t *testing.T) {
	s := openFile(t)
	s.gcBatchRows = 500
	const batches = 40
	const expired = batches * 500
	seedDeviceCodes(t, s, expired, 10)
	gcNow := pacingNow.Add(901 * time.Second)

	stop := make(chan struct{})
	seen := make(chan map[int]bool, 1) // expired rows left after each write
	wrote := make(chan struct{})
	go func() {
		left := map[int]bool{}
		defer func() { seen <- left }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.CreateDeviceCode(t.Context(), store.DeviceCode{Hash: fmt.Sprintf("w%d", i), UserCodeHash: fmt.Sprintf("wu%d", i),
				ClientID: "client-1", Status: store.DevicePending, CreatedAt: gcNow, ExpiresAt: gcNow.Add(time.Hour)}); err != nil {
				t.Error(err)
				return
			}
			left[countExpired(t, s)] = true
			if i == 0 {
				close(wrote)
			}
		}
	}()
	<-wrote
	n, err := s.GC(t.Context(), gcNow)
	close(stop)
	left := <-seen
	if err != nil || n != expired {
		t.Fatalf("GC deleted %d, %v; want %d", n, err, expired)
	}
	var between []int
	for k := range left {
		if k > 0 && k < expired {
			between = append(between, k)
		}
	}
	slices.Sort(between)
	t.Logf("expired rows left after writes during GC: %v", between)
	if len(between) < batches/8 {
		t.Errorf("writes were answered between %d of GC's %d batches (rows left: %v): they waited for the collection", len(between), batches, between)
	}
	if left := countExpired(t, s); left != 0 {
		t.Errorf("%d expired rows left after GC", left)
	}
	for _, h := range []string{"w0", fmt.Sprintf("h%d", expired)} {
		if _, err := s.GetDeviceCode(t.Context(), h); err != nil {
			t.Errorf("live code %s: %v", h, err)
		}
	}
}

// A run stops after gcMaxBatches batches of a table and the next run
// continues, on both dialects.
func TestGCBatchesPerRunAreBounded(t *testing.T) {
	for name, open := range fileStores() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			s.gcBatchRows, s.gcMaxBatches = 100, 3
			seedDeviceCodes(t, s, 750, 5)
			gcNow := pacingNow.Add(901 * time.Second)
			for i, want := range []int{300, 300, 150, 0} {
				if n, err := s.GC(t.Context(), gcNow); err != nil || n != want {
					t.Fatalf("run %d: GC deleted %d, %v; want %d", i+1, n, err, want)
				}
			}
			if left := countExpired(t, s); left != 0 {
				t.Errorf("%d expired rows left", left)
			}
			if _, err := s.GetDeviceCode(t.Context(), "h750"); err != nil {
				t.Errorf("a live code was collected: %v", err)
			}
		})
	}
}
