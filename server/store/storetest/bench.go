package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// Bench runs micro-benchmarks of the calls on the server's hot paths against
// stores made by newStore (fresh per sub-benchmark).
func Bench(b *testing.B, newStore func(b *testing.B) store.Store) {
	b.Run("GetAPIKeyByHash", func(b *testing.B) {
		s := newStore(b)
		ctx := b.Context()
		for i := range 100 {
			k := store.APIKey{UserID: fmt.Sprintf("user-%d", i), Hash: fmt.Sprintf("hash-%d", i), Sealed: make([]byte, 64), CreatedAt: base}
			if err := s.SetAPIKey(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if _, err := s.GetAPIKeyByHash(ctx, "hash-42"); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("ConsumeAuthCode", func(b *testing.B) {
		s := newStore(b)
		ctx := b.Context()
		i := 0
		for b.Loop() { // create + consume: one code exchange's worth of writes
			i++
			c := newAuthCode(fmt.Sprintf("code-%d", i))
			if err := s.CreateAuthCode(ctx, c); err != nil {
				b.Fatal(err)
			}
			if _, err := s.ConsumeAuthCode(ctx, c.Hash, redeem(c, "jti", base.Add(24*time.Hour), base)); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("UpdateDeviceCode", func(b *testing.B) {
		s := newStore(b)
		ctx := b.Context()
		d := newDevice("dc-bench", "uc-bench")
		if err := s.CreateDeviceCode(ctx, d); err != nil {
			b.Fatal(err)
		}
		poll := func(cur store.DeviceCode) (store.DeviceCode, error) {
			cur.LastPollAt = cur.LastPollAt.Add(time.Second)
			return cur, nil
		}
		for b.Loop() {
			if _, err := s.UpdateDeviceCode(ctx, d.Hash, poll); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("IsTokenRevoked", func(b *testing.B) {
		s := newStore(b)
		ctx := b.Context()
		for i := range 100 {
			if err := s.RevokeToken(ctx, fmt.Sprintf("jti-%d", i), base.Add(24*time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
		i := 0
		for b.Loop() { // half hits, half misses
			i++
			if _, err := s.IsTokenRevoked(ctx, fmt.Sprintf("jti-%d", i%200)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
