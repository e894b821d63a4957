// Package storetest is the contract every store.Store backend passes (dex's
// storage/conformance is the model). A backend's test calls
//
//	storetest.Run(t, func(t *testing.T) store.Store { ... })
//
// where the function returns a fresh, empty store and registers its Close
// with t.Cleanup.
//
// Conventions the suite pins down, so that all backends agree:
//   - Times round-trip to the millisecond: records are compared after
//     t.UTC().Truncate(time.Millisecond). The zero time reads back as zero.
//   - Empty and nil slices ([]string and []byte) both read back as nil.
//   - "Past" in GC is strict: a record expiring exactly at now is kept.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// base is the suite's "now"; whole seconds, so sums stay millisecond-exact.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Run runs the whole contract against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Clients", testClients},
		{"ClientSlices", testClientSlices},
		{"TimePrecision", testTimePrecision},
		{"AuthCodes", testAuthCodes},
		{"ConsumeAuthCode", testConsumeAuthCode},
		{"DeviceCodes", testDeviceCodes},
		{"DeviceCodeReuseAfterExpiry", testDeviceCodeReuse},
		{"UpdateDeviceCode", testUpdateDeviceCode},
		{"UpdateDeviceCodeErrors", testUpdateDeviceCodeErrors},
		{"Users", testUsers},
		{"APIKeys", testAPIKeys},
		{"Revocation", testRevocation},
		{"Secrets", testSecrets},
		{"Counters", testCounters},
		{"ConcurrentAddCounter", testConcurrentCounter},
		{"GC", testGC},
		{"ClientUsage", testClientUsage},
		{"UnusedClientGC", testUnusedClientGC},
		{"ConcurrentMarkClientUsedAndGC", testConcurrentMarkUsedGC},
		{"ConcurrentConsumeAuthCode", testConcurrentConsume},
		{"ConcurrentConsumeManyAuthCodes", testConcurrentConsumeMany},
		{"ConcurrentUpdateDeviceCode2", func(t *testing.T, s store.Store) { testConcurrentUpdate(t, s, 2) }},
		{"ConcurrentUpdateDeviceCode20", func(t *testing.T, s store.Store) { testConcurrentUpdate(t, s, 20) }},
		{"ConcurrentDeviceApproval", testConcurrentApproval},
		{"PollsRaceApproval", testPollsRaceApproval},
		{"ConcurrentCreateDeviceCode", testConcurrentCreateDevice},
		{"ConcurrentSetAPIKey", testConcurrentSetAPIKey},
		{"ConcurrentGetOrCreateSecret", testConcurrentSecret},
		{"MetadataDocuments", testMetadataDocuments},
		{"MetadataDocumentGC", testMetadataDocumentGC},
		{"ConcurrentPutMetadataDocument", testConcurrentPutMetadataDocument},
		{"RefreshTokens", testRefreshTokens},
		{"RotateRefreshToken", testRotateRefreshToken},
		{"RevokeRefreshFamily", testRevokeRefreshFamily},
		{"RefreshGC", testRefreshGC},
		{"ConcurrentRotateRefreshToken", testConcurrentRotate},
		{"ConcurrentRotateAndRevoke", testConcurrentRotateRevoke},
		{"RefreshSuccessor", testRefreshSuccessor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

// ms normalises a time to what every backend must preserve.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func normClient(c store.Client) store.Client {
	c.CreatedAt, c.UsedAt = ms(c.CreatedAt), ms(c.UsedAt)
	return c
}

func normAuthCode(c store.AuthCode) store.AuthCode {
	c.CreatedAt, c.ExpiresAt, c.UsedAt, c.TokenExp = ms(c.CreatedAt), ms(c.ExpiresAt), ms(c.UsedAt), ms(c.TokenExp)
	return c
}

func normDevice(d store.DeviceCode) store.DeviceCode {
	d.LastPollAt, d.CreatedAt, d.ExpiresAt = ms(d.LastPollAt), ms(d.CreatedAt), ms(d.ExpiresAt)
	return d
}

func normUser(u store.User) store.User {
	u.CreatedAt = ms(u.CreatedAt)
	return u
}

func normKey(k store.APIKey) store.APIKey {
	k.CreatedAt = ms(k.CreatedAt)
	return k
}

// same fails the test unless got and want are equal after norm.
func same[T any](t *testing.T, what string, got, want T, norm func(T) T) {
	t.Helper()
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// must fails the test now if err is not nil.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantErr fails the test unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

// stored reads key with get, fails unless the record equals want after norm,
// and returns the record as read.
func stored[T any](t *testing.T, what string, get func(context.Context, string) (T, error), key string, want T, norm func(T) T) T {
	t.Helper()
	got, err := get(t.Context(), key)
	must(t, what, err)
	same(t, what, got, want, norm)
	return got
}

// refused fails unless create(dup), whose key is taken, fails with
// ErrAlreadyExists and key still reads back as want.
func refused[T any](t *testing.T, what string, create func(context.Context, T) error, dup T, get func(context.Context, string) (T, error), key string, want T, norm func(T) T) {
	t.Helper()
	wantErr(t, what, create(t.Context(), dup), store.ErrAlreadyExists)
	stored(t, what+": record after", get, key, want, norm)
}

// absent fails unless get finds nothing under key.
func absent[T any](t *testing.T, what string, get func(context.Context, string) (T, error), key string) {
	t.Helper()
	_, err := get(t.Context(), key)
	wantErr(t, what, err, store.ErrNotFound)
}
