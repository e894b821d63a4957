package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// soleWinner returns the index of the one nil error in errs: two or none
// end the test, and every other error must be loser. what names the racers.
func soleWinner(t *testing.T, what string, errs []error, loser error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("%s: %d and %d both won", what, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, loser):
			t.Errorf("%s: %d got %v, want %v", what, i, err, loser)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: none won", what)
	}
	return winner
}

// race runs f(0..n-1) in n goroutines released together and waits for all.
func race(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// rendezvous makes the first call of each of n updaters wait (up to a bound)
// until all n have read the record, so every one of them starts from the same
// version and all but one must conflict. A backend that held a lock across fn
// would only make the wait time out, not deadlock; and since under such a
// lock nobody else can arrive, a wait ends once no one has arrived for
// rendezvousIdle (it used to wait the whole 500 ms for each of 49 callers
// in turn, 25 s per test on SQLite).
type rendezvous struct {
	n       int32
	arrived atomic.Int32
	all     chan struct{}
}

const (
	rendezvousMax  = 500 * time.Millisecond
	rendezvousIdle = 50 * time.Millisecond
	rendezvousTick = 5 * time.Millisecond
)

func newRendezvous(n int) *rendezvous {
	return &rendezvous{n: int32(n), all: make(chan struct{})}
}

func (r *rendezvous) wait() {
	if r.arrived.Add(1) == r.n {
		close(r.all)
	}
	tick := time.NewTicker(rendezvousTick)
	defer tick.Stop()
	seen, idle := r.arrived.Load(), time.Duration(0)
	for waited := time.Duration(0); waited < rendezvousMax && idle < rendezvousIdle; waited += rendezvousTick {
		select {
		case <-r.all:
			return
		case <-tick.C:
		}
		if now := r.arrived.Load(); now != seen {
			seen, idle = now, 0
		} else {
			idle += rendezvousTick
		}
	}
}

func testConcurrentConsume(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 50
	c := newAuthCode("code-raced")
	must(t, "CreateAuthCode", s.CreateAuthCode(ctx, c))

	results := make([]store.AuthCode, n)
	errs := make([]error, n)
	// Every fifth caller presents another verifier's challenge: it may see
	// the code unused (mismatch) or spent, but never spend it.
	impostor := func(i int) bool { return i%5 == 0 }
	race(n, func(i int) {
		r := redeem(c, fmt.Sprintf("jti-%d", i), base.Add(24*time.Hour), base.Add(time.Minute))
		if impostor(i) {
			r.CodeChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
		}
		results[i], errs[i] = s.ConsumeAuthCode(ctx, c.Hash, r)
	})

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && impostor(i):
			t.Fatalf("goroutine %d spent the code with the wrong challenge", i)
		case err == nil && winner >= 0:
			t.Fatalf("goroutines %d and %d both consumed the code", winner, i)
		case err == nil:
			winner = i
		case impostor(i) && errors.Is(err, store.ErrCodeMismatch):
		case !errors.Is(err, store.ErrAlreadyUsed):
			t.Errorf("goroutine %d: got %v, want ErrAlreadyUsed", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no goroutine consumed the code")
	}
	want := fmt.Sprintf("jti-%d", winner)
	for i, r := range results {
		if errors.Is(errs[i], store.ErrCodeMismatch) {
			continue // saw the code before the winner spent it
		}
		if !r.Used || r.TokenID != want {
			t.Errorf("goroutine %d saw Used=%v TokenID=%q, want true and the winner's %q", i, r.Used, r.TokenID, want)
		}
	}
	got, err := s.GetAuthCode(ctx, c.Hash)
	must(t, "GetAuthCode", err)
	if got.TokenID != want {
		t.Errorf("stored TokenID = %q, want the winner's %q", got.TokenID, want)
	}
}

// testConcurrentConsumeMany races exchanges of many codes at once, as a
// busy token endpoint does (on SQLite a group then spends several codes in
// one statement): per code, two holders of the verifier and an impostor.
// Each code is spent exactly once, by a holder, whose token id is stored
// and returned; nobody else is told they spent it.
func testConcurrentConsumeMany(t *testing.T, s store.Store) {
	ctx := t.Context()
	const codes, perCode = 24, 3
	cs := make([]store.AuthCode, codes)
	for k := range cs {
		cs[k] = newAuthCode(fmt.Sprintf("code-many-%d", k))
		must(t, "CreateAuthCode", s.CreateAuthCode(ctx, cs[k]))
	}
	results := make([]store.AuthCode, codes*perCode)
	errs := make([]error, codes*perCode)
	impostor := func(i int) bool { return i%perCode == perCode-1 }
	race(codes*perCode, func(i int) {
		c := cs[i/perCode]
		r := redeem(c, fmt.Sprintf("jti-many-%d", i), base.Add(24*time.Hour), base.Add(time.Minute))
		if impostor(i) {
			r.CodeChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
		}
		results[i], errs[i] = s.ConsumeAuthCode(ctx, c.Hash, r)
	})
	for k, c := range cs {
		winner := -1
		for i := k * perCode; i < (k+1)*perCode; i++ {
			err := errs[i]
			switch {
			case err == nil && impostor(i):
				t.Fatalf("%s: caller %d spent it with the wrong challenge", c.Hash, i)
			case err == nil && winner >= 0:
				t.Fatalf("%s: callers %d and %d both spent it", c.Hash, winner, i)
			case err == nil:
				winner = i
				if r := results[i]; !r.Used || r.TokenID != fmt.Sprintf("jti-many-%d", i) || r.UserID != c.UserID || r.Scope != c.Scope {
					t.Errorf("%s: the winner got %+v", c.Hash, r)
				}
			case impostor(i) && errors.Is(err, store.ErrCodeMismatch):
			case !errors.Is(err, store.ErrAlreadyUsed):
				t.Errorf("%s: caller %d got %v, want ErrAlreadyUsed", c.Hash, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: nobody spent it", c.Hash)
		}
		got, err := s.GetAuthCode(ctx, c.Hash)
		must(t, "GetAuthCode", err)
		if !got.Used || got.TokenID != fmt.Sprintf("jti-many-%d", winner) {
			t.Errorf("%s: stored Used=%v TokenID=%q, want the winner's jti-many-%d", c.Hash, got.Used, got.TokenID, winner)
		}
	}
}

// testConcurrentUpdate: n pollers each add 1 s to the interval. No update is
// lost, and each successful fn's result is what was stored.
func testConcurrentUpdate(t *testing.T, s store.Store, n int) {
	ctx := t.Context()
	d := newDevice("dc-raced", "uc-raced")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))

	var calls atomic.Int32
	rv := newRendezvous(n)
	results := make([]store.DeviceCode, n)
	errs := make([]error, n)
	race(n, func(i int) {
		first := true
		results[i], errs[i] = s.UpdateDeviceCode(ctx, d.Hash, func(cur store.DeviceCode) (store.DeviceCode, error) {
			calls.Add(1)
			if first {
				first = false
				rv.wait()
			}
			cur.Interval += time.Second
			cur.LastPollAt = base.Add(time.Duration(i+1) * time.Second)
			return cur, nil
		})
	})

	seen := map[time.Duration]int{}
	for i, err := range errs {
		must(t, fmt.Sprintf("UpdateDeviceCode %d", i), err)
		seen[results[i].Interval]++
	}
	got, err := s.GetDeviceCode(ctx, d.Hash)
	must(t, "GetDeviceCode", err)
	if want := d.Interval + time.Duration(n)*time.Second; got.Interval != want {
		t.Errorf("final Interval = %v, want %v: updates were lost", got.Interval, want)
	}
	// Each success wrote on top of a distinct predecessor.
	for k := 1; k <= n; k++ {
		if iv := d.Interval + time.Duration(k)*time.Second; seen[iv] != 1 {
			t.Errorf("%d updaters returned Interval %v, want exactly 1", seen[iv], iv)
		}
	}
	if int(calls.Load()) < n {
		t.Errorf("fn called %d times for %d updates", calls.Load(), n)
	}
	t.Logf("%d updates took %d fn calls", n, calls.Load())
}

// testConcurrentApproval: two approvers race the pending → approved
// transition; exactly one sees the code still pending.
func testConcurrentApproval(t *testing.T, s store.Store) {
	ctx := t.Context()
	errNotPending := errors.New("not pending")
	for round := range 10 {
		d := newDevice(fmt.Sprintf("dc-%d", round), fmt.Sprintf("uc-%d", round))
		must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
		rv := newRendezvous(2)
		errs := make([]error, 2)
		race(2, func(i int) {
			first := true
			_, errs[i] = s.UpdateDeviceCode(ctx, d.Hash, func(cur store.DeviceCode) (store.DeviceCode, error) {
				if first {
					first = false
					rv.wait()
				}
				if cur.Status != store.DevicePending {
					return cur, errNotPending
				}
				cur.Status, cur.UserID = store.DeviceApproved, fmt.Sprintf("user-%d", i)
				return cur, nil
			})
		})
		winner := soleWinner(t, fmt.Sprintf("round %d: approvers seeing the code pending", round), errs, errNotPending)
		got, err := s.GetDeviceCode(ctx, d.Hash)
		must(t, "GetDeviceCode", err)
		if want := fmt.Sprintf("user-%d", winner); got.Status != store.DeviceApproved || got.UserID != want {
			t.Errorf("round %d: stored %s by %q, want approved by %q", round, got.Status, got.UserID, want)
		}
	}
}

// testConcurrentCreateDevice: one user code, many inserts; one wins.
func testConcurrentCreateDevice(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 20
	errs := make([]error, n)
	race(n, func(i int) {
		errs[i] = s.CreateDeviceCode(ctx, newDevice(fmt.Sprintf("dc-%d", i), "uc-shared"))
	})
	winner := soleWinner(t, "inserts taking the user code", errs, store.ErrAlreadyExists)
	got, err := s.GetDeviceCodeByUserCode(ctx, "uc-shared")
	must(t, "GetDeviceCodeByUserCode", err)
	if want := fmt.Sprintf("dc-%d", winner); got.Hash != want {
		t.Errorf("user code maps to %q, want the winner %q", got.Hash, want)
	}
}

// testConcurrentSetAPIKey: many regenerations at once leave exactly one key.
func testConcurrentSetAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 20
	errs := make([]error, n)
	race(n, func(i int) {
		errs[i] = s.SetAPIKey(ctx, store.APIKey{UserID: "user-1", Hash: fmt.Sprintf("hash-%d", i), CreatedAt: base})
	})
	for i, err := range errs {
		must(t, fmt.Sprintf("SetAPIKey %d", i), err)
	}
	k, err := s.GetAPIKeyByUser(ctx, "user-1")
	must(t, "GetAPIKeyByUser", err)
	var found []string
	for i := range n {
		h := fmt.Sprintf("hash-%d", i)
		got, err := s.GetAPIKeyByHash(ctx, h)
		switch {
		case err == nil:
			found = append(found, h)
			same(t, "GetAPIKeyByHash", got, k, normKey)
		case !errors.Is(err, store.ErrNotFound):
			t.Fatalf("GetAPIKeyByHash(%s): %v", h, err)
		}
	}
	if len(found) != 1 || found[0] != k.Hash {
		t.Errorf("hashes findable: %q, want exactly the user's key %q", found, k.Hash)
	}
}

// testConcurrentSecret: concurrent first callers all get one value.
func testConcurrentSecret(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 20
	vals := make([][]byte, n)
	errs := make([]error, n)
	race(n, func(i int) {
		vals[i], errs[i] = s.GetOrCreateSecret(ctx, "jwt", func() ([]byte, error) {
			return fmt.Appendf(nil, "value-%d", i), nil
		})
	})
	for i := range n {
		must(t, fmt.Sprintf("GetOrCreateSecret %d", i), errs[i])
		if string(vals[i]) != string(vals[0]) {
			t.Fatalf("callers got different secrets: %q and %q", vals[0], vals[i])
		}
	}
	stored, err := s.GetOrCreateSecret(ctx, "jwt", func() ([]byte, error) { return []byte("late"), nil })
	must(t, "GetOrCreateSecret", err)
	if string(stored) != string(vals[0]) {
		t.Errorf("stored secret %q, callers got %q", stored, vals[0])
	}
}

// testPollsRaceApproval: 49 pollers update only the pacing (LastPollAt,
// Interval) while one approver approves, all at once: the approval is never
// lost, no poller's fn sees a status it did not read, and pacing updates
// made after the approval are kept with it.
func testPollsRaceApproval(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 50
	d := newDevice("dc-polled", "uc-polled")
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
	rv := newRendezvous(n)
	errs := make([]error, n)
	race(n, func(i int) {
		first := true
		_, errs[i] = s.UpdateDeviceCode(ctx, d.Hash, func(cur store.DeviceCode) (store.DeviceCode, error) {
			if first {
				first = false
				rv.wait()
			}
			if i == 0 {
				cur.Status, cur.UserID = store.DeviceApproved, "user-approver"
				return cur, nil
			}
			if !cur.LastPollAt.IsZero() {
				cur.Interval += time.Second // slow_down
			}
			cur.LastPollAt = base.Add(time.Duration(i) * time.Second)
			return cur, nil
		})
	})
	for i, err := range errs {
		must(t, fmt.Sprintf("UpdateDeviceCode %d", i), err)
	}
	got, err := s.GetDeviceCode(ctx, d.Hash)
	must(t, "GetDeviceCode", err)
	if got.Status != store.DeviceApproved || got.UserID != "user-approver" {
		t.Fatalf("after the race: %s by %q, want approved by user-approver", got.Status, got.UserID)
	}
	// 49 polls: the first set LastPollAt, the other 48 each slowed down.
	if want := d.Interval + (n-2)*time.Second; got.Interval != want {
		t.Errorf("Interval = %v, want %v: pacing updates were lost", got.Interval, want)
	}
	if got.LastPollAt.IsZero() {
		t.Error("LastPollAt lost")
	}
}
