package server

import (
	"context"
	"time"

	"github.com/mcpauth/mcpauth/server/internal/promtext"
	"github.com/mcpauth/mcpauth/server/store"
)

// timedStore observes the latency of every store operation. The wall clock
// here only measures durations, as the request log does; no logic reads it.
type timedStore struct {
	next store.Store
	obs  *promtext.HistogramVec
}

// timeStore wraps st when metrics are on, and returns it unchanged when not.
func (m *Metrics) timeStore(st store.Store) store.Store {
	if m == nil {
		return st
	}
	return &timedStore{next: st, obs: m.store}
}

func timed[T any](s *timedStore, op string, f func() (T, error)) (T, error) {
	start := time.Now()
	v, err := f()
	s.obs.With(op).Observe(time.Since(start).Seconds())
	return v, err
}

func (s *timedStore) timedErr(op string, f func() error) error {
	_, err := timed(s, op, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

func (s *timedStore) CreateClient(ctx context.Context, c store.Client) error {
	return s.timedErr("CreateClient", func() error { return s.next.CreateClient(ctx, c) })
}

func (s *timedStore) MarkClientUsed(ctx context.Context, id string, at time.Time) error {
	return s.timedErr("MarkClientUsed", func() error { return s.next.MarkClientUsed(ctx, id, at) })
}

func (s *timedStore) GetClient(ctx context.Context, id string) (store.Client, error) {
	return timed(s, "GetClient", func() (store.Client, error) { return s.next.GetClient(ctx, id) })
}

func (s *timedStore) CreateAuthCode(ctx context.Context, c store.AuthCode) error {
	return s.timedErr("CreateAuthCode", func() error { return s.next.CreateAuthCode(ctx, c) })
}

func (s *timedStore) GetAuthCode(ctx context.Context, hash string) (store.AuthCode, error) {
	return timed(s, "GetAuthCode", func() (store.AuthCode, error) { return s.next.GetAuthCode(ctx, hash) })
}

func (s *timedStore) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	return timed(s, "ConsumeAuthCode", func() (store.AuthCode, error) {
		return s.next.ConsumeAuthCode(ctx, hash, r)
	})
}

func (s *timedStore) CreateDeviceCode(ctx context.Context, d store.DeviceCode) error {
	return s.timedErr("CreateDeviceCode", func() error { return s.next.CreateDeviceCode(ctx, d) })
}

func (s *timedStore) GetDeviceCode(ctx context.Context, hash string) (store.DeviceCode, error) {
	return timed(s, "GetDeviceCode", func() (store.DeviceCode, error) { return s.next.GetDeviceCode(ctx, hash) })
}

func (s *timedStore) GetDeviceCodeByUserCode(ctx context.Context, h string) (store.DeviceCode, error) {
	return timed(s, "GetDeviceCodeByUserCode", func() (store.DeviceCode, error) { return s.next.GetDeviceCodeByUserCode(ctx, h) })
}

func (s *timedStore) UpdateDeviceCode(ctx context.Context, hash string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	return timed(s, "UpdateDeviceCode", func() (store.DeviceCode, error) { return s.next.UpdateDeviceCode(ctx, hash, fn) })
}

func (s *timedStore) UpsertUser(ctx context.Context, u store.User) error {
	return s.timedErr("UpsertUser", func() error { return s.next.UpsertUser(ctx, u) })
}

func (s *timedStore) GetUser(ctx context.Context, id string) (store.User, error) {
	return timed(s, "GetUser", func() (store.User, error) { return s.next.GetUser(ctx, id) })
}

func (s *timedStore) GetUserBySubject(ctx context.Context, subject string) (store.User, error) {
	return timed(s, "GetUserBySubject", func() (store.User, error) { return s.next.GetUserBySubject(ctx, subject) })
}

func (s *timedStore) SetAPIKey(ctx context.Context, k store.APIKey) error {
	return s.timedErr("SetAPIKey", func() error { return s.next.SetAPIKey(ctx, k) })
}

func (s *timedStore) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	return timed(s, "GetAPIKeyByHash", func() (store.APIKey, error) { return s.next.GetAPIKeyByHash(ctx, hash) })
}

func (s *timedStore) GetAPIKeyByUser(ctx context.Context, userID string) (store.APIKey, error) {
	return timed(s, "GetAPIKeyByUser", func() (store.APIKey, error) { return s.next.GetAPIKeyByUser(ctx, userID) })
}

func (s *timedStore) ListAPIKeys(ctx context.Context) ([]store.APIKey, error) {
	return timed(s, "ListAPIKeys", func() ([]store.APIKey, error) { return s.next.ListAPIKeys(ctx) })
}

func (s *timedStore) ResealAPIKey(ctx context.Context, userID, hash string, sealed []byte) error {
	return s.timedErr("ResealAPIKey", func() error { return s.next.ResealAPIKey(ctx, userID, hash, sealed) })
}

func (s *timedStore) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return s.timedErr("RevokeToken", func() error { return s.next.RevokeToken(ctx, jti, exp) })
}

func (s *timedStore) IsTokenRevoked(ctx context.Context, jti string) (bool, error) {
	return timed(s, "IsTokenRevoked", func() (bool, error) { return s.next.IsTokenRevoked(ctx, jti) })
}

func (s *timedStore) CreateRefreshToken(ctx context.Context, t store.RefreshToken) error {
	return s.timedErr("CreateRefreshToken", func() error { return s.next.CreateRefreshToken(ctx, t) })
}

func (s *timedStore) GetRefreshToken(ctx context.Context, hash string) (store.RefreshToken, error) {
	return timed(s, "GetRefreshToken", func() (store.RefreshToken, error) { return s.next.GetRefreshToken(ctx, hash) })
}

func (s *timedStore) RotateRefreshToken(ctx context.Context, hash string, next store.RefreshToken, now time.Time, successor []byte) (store.RefreshToken, error) {
	return timed(s, "RotateRefreshToken", func() (store.RefreshToken, error) {
		return s.next.RotateRefreshToken(ctx, hash, next, now, successor)
	})
}

func (s *timedStore) RevokeRefreshFamily(ctx context.Context, familyID string) ([]store.RevokedToken, error) {
	return timed(s, "RevokeRefreshFamily", func() ([]store.RevokedToken, error) { return s.next.RevokeRefreshFamily(ctx, familyID) })
}

func (s *timedStore) GetOrCreateSecret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	return timed(s, "GetOrCreateSecret", func() ([]byte, error) { return s.next.GetOrCreateSecret(ctx, name, gen) })
}

func (s *timedStore) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	return timed(s, "AddCounter", func() (int64, error) { return s.next.AddCounter(ctx, name, delta) })
}

func (s *timedStore) PutMetadataDocument(ctx context.Context, d store.MetadataDocument) error {
	return s.timedErr("PutMetadataDocument", func() error { return s.next.PutMetadataDocument(ctx, d) })
}

func (s *timedStore) GetMetadataDocument(ctx context.Context, url string) (store.MetadataDocument, error) {
	return timed(s, "GetMetadataDocument", func() (store.MetadataDocument, error) { return s.next.GetMetadataDocument(ctx, url) })
}

func (s *timedStore) GC(ctx context.Context, now time.Time) (int, error) {
	return timed(s, "GC", func() (int, error) { return s.next.GC(ctx, now) })
}

// Close is not timed: it happens once, at shutdown.
func (s *timedStore) Close() error { return s.next.Close() }
