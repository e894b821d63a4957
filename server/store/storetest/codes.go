package storetest

import (
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

func testClients(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := store.Client{
		ID:                      "client-1",
		Name:                    "Ünïcode CLI 🔑",
		RedirectURIs:            []string{"http://127.0.0.1/callback", "com.example.app:/cb"},
		GrantTypes:              []string{"authorization_code", "urn:ietf:params:oauth:grant-type:device_code"},
		ResponseTypes:           []string{"code"},
		Scope:                   "mcp",
		TokenEndpointAuthMethod: "none",
		ApplicationType:         "native",
		CreatedAt:               base,
	}
	must(t, "CreateClient", s.CreateClient(ctx, c))
	stored(t, "GetClient", s.GetClient, c.ID, c, normClient)

	dup := c
	dup.Name = "impostor"
	refused(t, "CreateClient duplicate", s.CreateClient, dup, s.GetClient, c.ID, c, normClient)

	absent(t, "GetClient unknown", s.GetClient, "no-such-client")
}

// testClientSlices: empty and nil slices read back as nil, and neither the
// caller's slices nor returned ones alias the store's.
func testClientSlices(t *testing.T, s store.Store) {
	ctx := t.Context()
	empty := store.Client{ID: "headless", RedirectURIs: []string{}, GrantTypes: nil, ResponseTypes: []string{}, CreatedAt: base}
	must(t, "CreateClient", s.CreateClient(ctx, empty))
	got, err := s.GetClient(ctx, empty.ID)
	must(t, "GetClient", err)
	if got.RedirectURIs != nil || got.GrantTypes != nil || got.ResponseTypes != nil {
		t.Errorf("empty slices read back as %#v, %#v, %#v; want nil", got.RedirectURIs, got.GrantTypes, got.ResponseTypes)
	}

	uris := []string{"https://app.example/cb"}
	must(t, "CreateClient", s.CreateClient(ctx, store.Client{ID: "aliased", RedirectURIs: uris, CreatedAt: base}))
	uris[0] = "https://evil.example/cb" // the caller reuses its slice
	got, err = s.GetClient(ctx, "aliased")
	must(t, "GetClient", err)
	if len(got.RedirectURIs) != 1 || got.RedirectURIs[0] != "https://app.example/cb" {
		t.Fatalf("stored slice changed with the caller's: %q", got.RedirectURIs)
	}
	got.RedirectURIs[0] = "https://evil.example/cb" // the caller edits a result
	again, err := s.GetClient(ctx, "aliased")
	must(t, "GetClient", err)
	if again.RedirectURIs[0] != "https://app.example/cb" {
		t.Errorf("stored slice changed with a returned one: %q", again.RedirectURIs)
	}
}

// testTimePrecision: any location and sub-millisecond part is accepted; what
// comes back is the same instant to the millisecond. Durations are exact.
func testTimePrecision(t *testing.T, s store.Store) {
	ctx := t.Context()
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	created := time.Date(2026, 3, 1, 17, 30, 0, 123_456_789, zone)
	d := store.DeviceCode{
		Hash: "dc-time", UserCodeHash: "uc-time", Status: store.DevicePending,
		Interval:  1500*time.Millisecond + 7, // nanoseconds survive
		CreatedAt: created, ExpiresAt: created.Add(900 * time.Second),
	}
	must(t, "CreateDeviceCode", s.CreateDeviceCode(ctx, d))
	got, err := s.GetDeviceCode(ctx, d.Hash)
	must(t, "GetDeviceCode", err)
	if !ms(got.CreatedAt).Equal(created.Truncate(time.Millisecond)) {
		t.Errorf("CreatedAt = %v, want %v to the millisecond", got.CreatedAt, created)
	}
	if !got.LastPollAt.IsZero() {
		t.Errorf("zero LastPollAt read back as %v", got.LastPollAt)
	}
	if got.Interval != d.Interval {
		t.Errorf("Interval = %v, want %v", got.Interval, d.Interval)
	}
	same(t, "GetDeviceCode", got, d, normDevice)
}

func newAuthCode(hash string) store.AuthCode {
	return store.AuthCode{
		Hash:          hash,
		ClientID:      "client-1",
		RedirectURI:   "http://127.0.0.1:53123/callback",
		CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Scope:         "mcp",
		Resource:      "https://mcp.example/mcp",
		UserID:        "user-1",
		CreatedAt:     base,
		ExpiresAt:     base.Add(10 * time.Minute),
	}
}

// redeem is the redemption that matches c: its client, redirect URI and
// challenge, at now.
func redeem(c store.AuthCode, tokenID string, tokenExp, now time.Time) store.Redemption {
	return store.Redemption{ClientID: c.ClientID, RedirectURI: c.RedirectURI, CodeChallenge: c.CodeChallenge,
		Now: now, TokenID: tokenID, TokenExp: tokenExp}
}

func testAuthCodes(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := newAuthCode("code-1")
	must(t, "CreateAuthCode", s.CreateAuthCode(ctx, c))
	got := stored(t, "GetAuthCode", s.GetAuthCode, c.Hash, c, normAuthCode)
	if got.Used || !got.UsedAt.IsZero() || got.TokenID != "" || !got.TokenExp.IsZero() {
		t.Errorf("fresh code has consumption fields set: %+v", got)
	}

	dup := newAuthCode("code-1")
	dup.UserID = "user-2"
	refused(t, "CreateAuthCode duplicate", s.CreateAuthCode, dup, s.GetAuthCode, c.Hash, c, normAuthCode)

	absent(t, "GetAuthCode unknown", s.GetAuthCode, "no-such-code")
}

func testConsumeAuthCode(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := newAuthCode("code-1")
	must(t, "CreateAuthCode", s.CreateAuthCode(ctx, c))

	now, exp := base.Add(time.Minute), base.Add(24*time.Hour+time.Minute)
	// A redemption that does not match spends nothing and gets the record
	// as stored.
	for name, edit := range map[string]func(r *store.Redemption){
		"another client":       func(r *store.Redemption) { r.ClientID = "client-2" },
		"another redirect URI": func(r *store.Redemption) { r.RedirectURI = "http://127.0.0.1:53124/callback" },
		"another challenge":    func(r *store.Redemption) { r.CodeChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN" },
		"at expiry":            func(r *store.Redemption) { r.Now = c.ExpiresAt },
		"after expiry":         func(r *store.Redemption) { r.Now = c.ExpiresAt.Add(time.Hour) },
		"empty fields":         func(r *store.Redemption) { r.ClientID, r.RedirectURI, r.CodeChallenge = "", "", "" },
	} {
		r := redeem(c, "jti-bad", exp, now)
		edit(&r)
		got, err := s.ConsumeAuthCode(ctx, c.Hash, r)
		wantErr(t, "ConsumeAuthCode with "+name, err, store.ErrCodeMismatch)
		same(t, "ConsumeAuthCode with "+name+" record", got, c, normAuthCode)
		stored(t, "GetAuthCode after "+name, s.GetAuthCode, c.Hash, c, normAuthCode)
	}
	// A millisecond before expiry still matches (times are stored in ms).
	if !c.Matches(redeem(c, "", exp, c.ExpiresAt.Add(-time.Millisecond))) {
		t.Error("a code a millisecond before its expiry does not match")
	}

	want := c
	want.Used, want.UsedAt, want.TokenID, want.TokenExp = true, now, "jti-1", exp
	got, err := s.ConsumeAuthCode(ctx, c.Hash, redeem(c, "jti-1", exp, now))
	must(t, "ConsumeAuthCode", err)
	same(t, "ConsumeAuthCode result", got, want, normAuthCode)
	stored(t, "GetAuthCode after consume", s.GetAuthCode, c.Hash, want, normAuthCode)

	// A replay fails and names the first token, so the caller can revoke it.
	got, err = s.ConsumeAuthCode(ctx, c.Hash, redeem(c, "jti-2", exp.Add(time.Hour), now.Add(time.Second)))
	wantErr(t, "ConsumeAuthCode replay", err, store.ErrAlreadyUsed)
	same(t, "ConsumeAuthCode replay record", got, want, normAuthCode)
	stored(t, "GetAuthCode after replay", s.GetAuthCode, c.Hash, want, normAuthCode)

	_, err = s.ConsumeAuthCode(ctx, "no-such-code", redeem(c, "jti-3", exp, now))
	wantErr(t, "ConsumeAuthCode unknown", err, store.ErrNotFound)
}
