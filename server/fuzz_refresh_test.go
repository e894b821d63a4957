package server_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// issueCountingStore counts what the refresh and revoke endpoints may
// issue or change: refresh tokens created or rotated, families and access
// tokens revoked.
type issueCountingStore struct {
	store.Store
	issued, revoked atomic.Int64
}

func (s *issueCountingStore) CreateRefreshToken(ctx context.Context, t store.RefreshToken) error {
	err := s.Store.CreateRefreshToken(ctx, t)
	if err == nil {
		s.issued.Add(1)
	}
	return err
}

func (s *issueCountingStore) RotateRefreshToken(ctx context.Context, h string, next store.RefreshToken, now time.Time, successor []byte) (store.RefreshToken, error) {
	t, err := s.Store.RotateRefreshToken(ctx, h, next, now, successor)
	if err == nil {
		s.issued.Add(1)
	}
	return t, err
}

func (s *issueCountingStore) RevokeRefreshFamily(ctx context.Context, id string) ([]store.RevokedToken, error) {
	l, err := s.Store.RevokeRefreshFamily(ctx, id)
	if err == nil {
		s.revoked.Add(1)
	}
	return l, err
}

func (s *issueCountingStore) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	err := s.Store.RevokeToken(ctx, jti, exp)
	if err == nil {
		s.revoked.Add(1)
	}
	return err
}

// tokenFixture is a server with two clients and a way to mint, per fuzz
// input, fresh refresh tokens (written to the store directly, not counted)
// and access tokens of the first client.
type tokenFixture struct {
	env           *servertest.Env
	st            *issueCountingStore
	inner         store.Store
	client, other string
	n             atomic.Int64
	hc            *http.Client
}

var fuzzTokenKey = []byte("fuzz-refresh-signing-key-0123456789abcdef")

func newTokenFixture(f *testing.F) *tokenFixture {
	inner := memory.New()
	st := &issueCountingStore{Store: inner}
	env := servertest.New(f, servertest.Options{Store: st, SigningKey: fuzzTokenKey, Limits: server.Limits{Disabled: true}, CacheCredentials: true})
	fx := &tokenFixture{env: env, st: st, inner: inner, hc: &http.Client{Timeout: 10 * time.Second}}
	for _, id := range []*string{&fx.client, &fx.other} {
		*id = "fuzz-client-" + string(rune('a'+fx.n.Add(1)))
		if err := inner.CreateClient(context.Background(), store.Client{
			ID: *id, RedirectURIs: []string{testRedirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, Scope: "mcp offline_access", TokenEndpointAuthMethod: "none", CreatedAt: servertest.Start,
		}); err != nil {
			f.Fatal(err)
		}
	}
	return fx
}

// refreshToken stores a fresh family of clientID and returns its token;
// spent first when spent is set.
func (fx *tokenFixture) refreshToken(t *testing.T, clientID string, spent bool) string {
	t.Helper()
	raw := "mcpr_" + strings.Repeat("0", 31) + base62Counter(fx.n.Add(1))
	now := fx.env.Clock.Now()
	rt := store.RefreshToken{
		Hash: sha256Hex(raw), FamilyID: "fam-" + raw[5:], ClientID: clientID, UserID: "u_fuzz", Scope: "mcp offline_access",
		ExpiresAt: now.Add(30 * 24 * time.Hour), CreatedAt: now, TokenID: "jti-" + raw[5:], TokenExp: now.Add(24 * time.Hour),
	}
	if err := fx.inner.CreateRefreshToken(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	if spent {
		next := rt
		next.Hash = sha256Hex(raw + "-next")
		if _, err := fx.inner.RotateRefreshToken(t.Context(), rt.Hash, next, now, nil); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

// base62Counter renders n in 12 base62 digits.
func base62Counter(n int64) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 12)
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[n%62]
		n /= 62
	}
	return string(b)
}

// accessToken signs a valid access token of clientID, as the server would.
func (fx *tokenFixture) accessToken(t *testing.T, clientID string) (raw, jti string) {
	t.Helper()
	now := fx.env.Clock.Now()
	jti = "fuzz-jti-" + base62Counter(fx.n.Add(1))
	raw, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "u_fuzz", "iss": fx.env.URL, "aud": fx.env.URL + "/mcp", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": jti, "client_id": clientID,
	}).SignedString(fuzzTokenKey)
	if err != nil {
		t.Fatal(err)
	}
	return raw, jti
}

func (fx *tokenFixture) post(t *testing.T, path, ctype, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fx.env.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := fx.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	return resp, data
}

// checkOAuthError: an RFC 6749 §5.2 body with the no-store headers.
func checkOAuthError(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var oe struct {
		Error       *string `json:"error"`
		Description *string `json:"error_description"`
	}
	switch {
	case ctype != "application/json" || resp.Header.Get("Cache-Control") != "no-store":
		t.Fatalf("%s: %d with Content-Type %q, Cache-Control %q", what, resp.StatusCode, ctype, resp.Header.Get("Cache-Control"))
	case json.Unmarshal(body, &oe) != nil || oe.Error == nil || *oe.Error == "" || !oauthErrorChars.MatchString(*oe.Error):
		t.Fatalf("%s: %d without an RFC 6749 error body: %.200s", what, resp.StatusCode, body)
	case oe.Description != nil && !oauthErrorChars.MatchString(*oe.Description):
		t.Fatalf("%s: error_description %q has characters RFC 6749 §5.2 forbids", what, *oe.Description)
	}
}

var fuzzCtypes = []string{"application/x-www-form-urlencoded", "application/json", "", "text/plain", "application/x-www-form-urlencoded; charset=utf-8"}

// FuzzRefreshGrant sends fuzzed bodies to /oauth/token. Placeholders give
// the fuzzer real values: CLIENT and OTHER are registered clients with the
// refresh grant, LIVE a fresh refresh token of CLIENT, SPENT a spent one,
// FOREIGN a fresh one of OTHER. Properties: never a 5xx; every refusal an
// RFC 6749 error that issues nothing; a token only for LIVE presented by
// CLIENT (or FOREIGN by OTHER), after which that token is spent; a
// family revoked only when a spent token is presented by its client.
func FuzzRefreshGrant(f *testing.F) {
	fx := newTokenFixture(f)
	for _, s := range []string{
		"grant_type=refresh_token&refresh_token=LIVE&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=LIVE&client_id=CLIENT&scope=mcp",
		"grant_type=refresh_token&refresh_token=LIVE&client_id=CLIENT&scope=mcp+offline_access+admin",
		"grant_type=refresh_token&refresh_token=SPENT&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=FOREIGN&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=LIVE&client_id=OTHER",
		"grant_type=refresh_token&refresh_token=LIVE&refresh_token=LIVE&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=mcpr_x&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=LIVE&client_id=CLIENT&resource=https://x.example",
		`{"grant_type":"refresh_token","refresh_token":"LIVE","client_id":"CLIENT"}`,
	} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, ct uint8, body string) {
		live, spent, foreign := fx.refreshToken(t, fx.client, false), fx.refreshToken(t, fx.client, true), fx.refreshToken(t, fx.other, false)
		filled := strings.NewReplacer("CLIENT", fx.client, "OTHER", fx.other, "LIVE", live, "SPENT", spent, "FOREIGN", foreign).Replace(body)
		issued, revoked := fx.st.issued.Load(), fx.st.revoked.Load()
		resp, data := fx.post(t, "/oauth/token", fuzzCtypes[int(ct)%len(fuzzCtypes)], filled)
		didIssue, didRevoke := fx.st.issued.Load() != issued, fx.st.revoked.Load() != revoked
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		case resp.StatusCode == http.StatusOK:
			var tok refreshBody
			if json.Unmarshal(data, &tok) != nil || tok.AccessToken == "" || !refreshShape.MatchString(tok.RefreshToken) {
				t.Fatalf("200 without new tokens: %s", data)
			}
			form, _ := url.ParseQuery(filled)
			presented := form.Get("refresh_token")
			switch owner := map[string]string{live: fx.client, foreign: fx.other}[presented]; {
			case owner == "":
				t.Fatalf("a token was issued for neither live token: %q", filled)
			case form.Get("client_id") != owner:
				t.Fatalf("a token was issued to a client the refresh token is not bound to: %q", filled)
			}
			got, err := fx.inner.GetRefreshToken(t.Context(), sha256Hex(presented))
			if err != nil || !got.Used {
				t.Fatalf("the presented token was not spent: %+v %v", got, err)
			}
		default:
			checkOAuthError(t, "refresh", resp, data)
			if didIssue {
				t.Fatalf("refused with %d but issued a token: %q", resp.StatusCode, filled)
			}
			if didRevoke && !strings.Contains(filled, spent) {
				t.Fatalf("revoked a family without a spent token being presented: %q", filled)
			}
		}
		// A live token of this input not presented stays usable.
		for _, raw := range []string{live, foreign} {
			if strings.Contains(filled, raw) {
				continue
			}
			if got, err := fx.inner.GetRefreshToken(t.Context(), sha256Hex(raw)); err != nil || got.Used || got.Revoked {
				t.Fatalf("a token not presented changed: %+v %v", got, err)
			}
		}
	})
}

// FuzzRevoke sends fuzzed bodies to /oauth/revoke. CLIENT and OTHER are
// registered clients; LIVE is a fresh refresh token of CLIENT, ACCESS a
// fresh access token of CLIENT. Properties: never a 5xx; 200 or an RFC
// 6749 error; a refusal revokes nothing; LIVE's family is revoked only by
// a 200 for a body naming LIVE and CLIENT, ACCESS only by one naming
// ACCESS and CLIENT.
func FuzzRevoke(f *testing.F) {
	fx := newTokenFixture(f)
	for _, s := range []string{
		"token=LIVE&client_id=CLIENT",
		"token=LIVE&client_id=CLIENT&token_type_hint=refresh_token",
		"token=ACCESS&client_id=CLIENT&token_type_hint=access_token",
		"token=ACCESS&client_id=CLIENT&token_type_hint=refresh_token",
		"token=LIVE&client_id=OTHER",
		"token=ACCESS&client_id=OTHER",
		"token=LIVE&client_id=nobody",
		"token=LIVE",
		"client_id=CLIENT",
		"token=mcpr_&client_id=CLIENT",
		"token=mcpa_x&client_id=CLIENT&token_type_hint=x",
		`{"token":"LIVE","client_id":"CLIENT"}`,
	} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, ct uint8, body string) {
		live := fx.refreshToken(t, fx.client, false)
		access, jti := fx.accessToken(t, fx.client)
		filled := strings.NewReplacer("CLIENT", fx.client, "OTHER", fx.other, "LIVE", live, "ACCESS", access).Replace(body)
		revoked := fx.st.revoked.Load()
		resp, data := fx.post(t, "/oauth/revoke", fuzzCtypes[int(ct)%len(fuzzCtypes)], filled)
		didRevoke := fx.st.revoked.Load() != revoked
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		case resp.StatusCode == http.StatusOK:
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("200 without Cache-Control: no-store")
			}
		default:
			checkOAuthError(t, "revoke", resp, data)
			if didRevoke {
				t.Fatalf("refused with %d but revoked something: %q", resp.StatusCode, filled)
			}
		}
		names := func(tok string) bool {
			return resp.StatusCode == http.StatusOK && strings.Contains(filled, tok) && strings.Contains(filled, fx.client)
		}
		if got, err := fx.inner.GetRefreshToken(t.Context(), sha256Hex(live)); err != nil || got.Revoked && !names(live) {
			t.Fatalf("LIVE revoked by %d %q (%v)", resp.StatusCode, filled, err)
		}
		if gone, err := fx.inner.IsTokenRevoked(t.Context(), jti); err != nil || gone && !names(access) {
			t.Fatalf("ACCESS revoked by %d %q (%v)", resp.StatusCode, filled, err)
		}
	})
}
