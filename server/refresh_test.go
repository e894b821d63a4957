package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

var refreshShape = regexp.MustCompile(`^mcpr_[0-9A-Za-z]{43}$`)

// refreshBody is a token response that may carry a refresh token.
type refreshBody struct {
	tokenBody
	RefreshToken string `json:"refresh_token"`
}

// refreshClient registers a client for the code, device and refresh grants.
func refreshClient(t *testing.T, env *servertest.Env) *testClient {
	t.Helper()
	id := registerMeta(t, env, map[string]any{
		"redirect_uris": []string{testRedirect},
		"grant_types":   []string{"authorization_code", deviceGrant, "refresh_token"},
		"scope":         "mcp offline_access",
	})
	return &testClient{t: t, env: env, ID: id, RedirectURI: testRedirect}
}

// grant runs the code flow for scope as b's user and returns the token
// response.
func (c *testClient) grant(b *servertest.Browser, scope string) refreshBody {
	c.t.Helper()
	u, v := c.authURL(url.Values{"scope": {scope}})
	back, err := b.Consent(context.Background(), u, "approve")
	if err != nil {
		c.t.Fatalf("consent: %v", err)
	}
	resp, body := c.exchange(back.Query().Get("code"), v)
	mustToken(c.t, resp, body)
	var rb refreshBody
	mustJSON(c.t, body, &rb)
	return rb
}

// offline is grant with offline_access, failing unless a refresh token
// comes with the access token.
func (c *testClient) offline(b *servertest.Browser) refreshBody {
	c.t.Helper()
	rb := c.grant(b, "mcp offline_access")
	if !refreshShape.MatchString(rb.RefreshToken) || rb.Scope != "mcp offline_access" {
		c.t.Fatalf("refresh_token %q scope %q; want an mcpr_ token and scope mcp offline_access", rb.RefreshToken, rb.Scope)
	}
	return rb
}

func (c *testClient) refresh(rt string, extra url.Values) (*http.Response, []byte) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.ID}}
	for k, v := range extra {
		form[k] = v
	}
	return postForm(c.t, c.env.URL+"/oauth/token", form)
}

// mustRefresh refreshes and fails unless a new access and refresh token
// come back.
func (c *testClient) mustRefresh(rt string, extra url.Values) refreshBody {
	c.t.Helper()
	resp, body := c.refresh(rt, extra)
	mustToken(c.t, resp, body)
	var rb refreshBody
	mustJSON(c.t, body, &rb)
	if !refreshShape.MatchString(rb.RefreshToken) || rb.RefreshToken == rt {
		c.t.Fatalf("refresh gave refresh_token %q; want a new mcpr_ token", rb.RefreshToken)
	}
	return rb
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A refresh token comes with the access token, from the code and the device
// grant, exactly when the scope includes offline_access and the client may
// use the refresh_token grant. It is stored only as its SHA-256 hash, bound
// to the client, user, scope and resource, for 30 days from the grant.
func TestRefreshTokenIssuance(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := refreshClient(t, env)
	b := env.Browser("ivy")

	rb := c.offline(b)
	userOf := userID(t, env, rb.AccessToken)
	rt, err := env.Store.GetRefreshToken(t.Context(), sha256Hex(rb.RefreshToken))
	if err != nil {
		t.Fatalf("the refresh token is not stored under its SHA-256: %v", err)
	}
	if _, err := env.Store.GetRefreshToken(t.Context(), rb.RefreshToken); err == nil {
		t.Fatal("the refresh token is stored in the clear")
	}
	if rt.ClientID != c.ID || rt.UserID != userOf || rt.Scope != "mcp offline_access" || !rt.ExpiresAt.Equal(servertest.Start.Add(30*24*time.Hour)) {
		t.Fatalf("stored refresh token %+v: want client %s, user %s, scope mcp offline_access, 30 days from the grant", rt, c.ID, userOf)
	}

	// Without offline_access, or for a client without the grant: none.
	if rb := c.grant(b, "mcp"); rb.RefreshToken != "" || rb.Scope != "mcp" {
		t.Fatalf("scope mcp: refresh_token %q scope %q; want none and mcp", rb.RefreshToken, rb.Scope)
	}
	plain := register(t, env) // code and device grants only
	if rb := plain.grant(b, "mcp offline_access"); rb.RefreshToken != "" || rb.Scope != "mcp" {
		t.Fatalf("client without the refresh_token grant: refresh_token %q scope %q; want none and mcp", rb.RefreshToken, rb.Scope)
	}

	// The device grant, at both token endpoints.
	for name, poll := range map[string]func(*testing.T, *servertest.Env, string, string) (*http.Response, []byte){
		"json endpoint": pollDevice, "oauth token endpoint": pollDeviceForm,
	} {
		resp, body := postJSON(t, env.URL+"/api/oauth/device/code", map[string]string{"client_id": c.ID, "scope": "mcp offline_access"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("device code: %d %s", resp.StatusCode, body)
		}
		var d deviceBody
		mustJSON(t, body, &d)
		if _, err := b.Device(context.Background(), d.UserCode, "approve"); err != nil {
			t.Fatal(err)
		}
		resp, body = poll(t, env, c.ID, d.DeviceCode)
		mustToken(t, resp, body)
		var got refreshBody
		mustJSON(t, body, &got)
		if !refreshShape.MatchString(got.RefreshToken) || got.Scope != "mcp offline_access" {
			t.Fatalf("%s: device grant refresh_token %q scope %q", name, got.RefreshToken, got.Scope)
		}
		c.mustRefresh(got.RefreshToken, nil)
	}
	d := requestDeviceCode(t, env, c.ID) // scope mcp
	if _, err := b.Device(context.Background(), d.UserCode, "approve"); err != nil {
		t.Fatal(err)
	}
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	var got refreshBody
	mustJSON(t, body, &got)
	if mustToken(t, resp, body); got.RefreshToken != "" {
		t.Fatal("device grant for scope mcp issued a refresh token")
	}
}

// Refreshing returns a new access token for the same user and a new
// refresh token; the presented one is spent. Presenting it again revokes
// the family: every refresh token and access token issued from the grant,
// at once, also through the credential cache.
func TestRefreshRotationAndReplay(t *testing.T) {
	t.Parallel()
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cache), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{CacheCredentials: cache})
			c := refreshClient(t, env)
			b := env.Browser("rotor")
			first := c.offline(b)
			user := userID(t, env, first.AccessToken)

			second := c.mustRefresh(first.RefreshToken, nil)
			if second.AccessToken == first.AccessToken || second.Scope != "mcp offline_access" {
				t.Fatalf("refresh: access token unchanged or scope %q", second.Scope)
			}
			if got := userID(t, env, second.AccessToken); got != user {
				t.Fatalf("refreshed token is for %s, want %s", got, user)
			}
			third := c.mustRefresh(second.RefreshToken, nil)
			userID(t, env, third.AccessToken) // cached, when the cache is on

			// An unrelated grant of the same user and client survives.
			other := c.offline(b)

			resp, body := c.refresh(first.RefreshToken, nil)
			oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
			for _, tok := range []string{first.AccessToken, second.AccessToken, third.AccessToken} {
				resp, body := ping(t, env, tok)
				wantChallenge(t, env, resp, body, true)
			}
			resp, body = c.refresh(third.RefreshToken, nil)
			oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
			userID(t, env, other.AccessToken)
			c.mustRefresh(other.RefreshToken, nil)
		})
	}
}

// A replayed authorization code revokes the refresh token family issued
// from it, too (RFC 6749 §4.1.2).
func TestCodeReplayRevokesRefreshTokens(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := refreshClient(t, env)
	b := env.Browser("replay")
	u, v := c.authURL(url.Values{"scope": {"mcp offline_access"}})
	back, err := b.Consent(context.Background(), u, "approve")
	if err != nil {
		t.Fatal(err)
	}
	code := back.Query().Get("code")
	resp, body := c.exchange(code, v)
	mustToken(t, resp, body)
	var rb refreshBody
	mustJSON(t, body, &rb)
	resp, body = c.exchange(code, v)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = c.refresh(rb.RefreshToken, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}

// An optional scope narrows the access token (not the family) and must be
// a subset of the grant.
func TestRefreshScope(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := refreshClient(t, env)
	rb := c.offline(env.Browser("scoper"))
	narrowed := c.mustRefresh(rb.RefreshToken, url.Values{"scope": {"mcp"}})
	if narrowed.Scope != "mcp" {
		t.Fatalf("scope mcp: got %q", narrowed.Scope)
	}
	again := c.mustRefresh(narrowed.RefreshToken, url.Values{"scope": {"offline_access mcp"}})
	if again.Scope != "mcp offline_access" {
		t.Fatalf("the family keeps its scope: got %q, want mcp offline_access", again.Scope)
	}
	for _, bad := range []string{"admin", "mcp admin", "mcp  offline_access"} {
		resp, body := c.refresh(again.RefreshToken, url.Values{"scope": {bad}})
		oauthErr(t, resp, body, http.StatusBadRequest, "invalid_scope")
	}
	// The refused requests did not spend the token.
	c.mustRefresh(again.RefreshToken, nil)

	// A family granted mcp alone (as a store could hold) cannot widen.
	raw := "mcpr_" + strings.Repeat("n", 43)
	if err := env.Store.CreateRefreshToken(t.Context(), store.RefreshToken{
		Hash: sha256Hex(raw), FamilyID: "narrow", ClientID: c.ID, UserID: "u_narrow", Scope: "mcp",
		CreatedAt: servertest.Start, ExpiresAt: servertest.Start.Add(time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	resp, body := c.refresh(raw, url.Values{"scope": {"mcp offline_access"}})
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_scope")
	if got := c.mustRefresh(raw, url.Values{"scope": {"mcp"}}); got.Scope != "mcp" {
		t.Fatalf("scope %q, want mcp", got.Scope)
	}
}

// Bad refresh requests get RFC 6749 errors, never a 5xx, and spend,
// revoke or issue nothing.
func TestRefreshErrors(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	c := refreshClient(t, env)
	other := refreshClient(t, env)
	noGrant := register(t, env)
	b := env.Browser("errs")
	rb := c.offline(b)
	theirs := other.offline(b)
	valid := rb.RefreshToken
	unknown := "mcpr_" + strings.Repeat("A", 43)

	for _, tt := range []struct {
		name   string
		client *testClient
		form   url.Values
		status int
		code   string
	}{
		{"another client's token", c, url.Values{"refresh_token": {theirs.RefreshToken}}, 400, "invalid_grant"},
		{"presented by another client", other, url.Values{"refresh_token": {valid}}, 400, "invalid_grant"},
		{"client without the grant", noGrant, url.Values{"refresh_token": {valid}}, 400, "invalid_grant"},
		{"unknown", c, url.Values{"refresh_token": {unknown}}, 400, "invalid_grant"},
		{"wrong prefix", c, url.Values{"refresh_token": {"mcpa_" + valid[5:]}}, 400, "invalid_grant"},
		{"truncated", c, url.Values{"refresh_token": {valid[:len(valid)-1]}}, 400, "invalid_grant"},
		{"not base62", c, url.Values{"refresh_token": {valid[:len(valid)-1] + "-"}}, 400, "invalid_grant"},
		{"an access token", c, url.Values{"refresh_token": {rb.AccessToken}}, 400, "invalid_grant"},
		{"missing refresh_token", c, url.Values{"refresh_token": nil}, 400, "invalid_request"},
		{"missing client_id", c, url.Values{"refresh_token": {valid}, "client_id": nil}, 400, "invalid_request"},
		{"unknown client", c, url.Values{"refresh_token": {valid}, "client_id": {"nobody"}}, 401, "invalid_client"},
		{"repeated refresh_token", c, url.Values{"refresh_token": {valid, valid}}, 400, "invalid_request"},
		{"scope beyond the grant", c, url.Values{"refresh_token": {valid}, "scope": {"mcp admin"}}, 400, "invalid_scope"},
		{"resource elsewhere", c, url.Values{"refresh_token": {valid}, "resource": {"https://other.example/mcp"}}, 400, "invalid_target"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{"grant_type": {"refresh_token"}, "client_id": {tt.client.ID}}
			for k, v := range tt.form {
				if v == nil {
					delete(form, k)
				} else {
					form[k] = v
				}
			}
			before := cs.writes.Load()
			resp, body := postForm(t, env.URL+"/oauth/token", form)
			oauthErr(t, resp, body, tt.status, tt.code)
			if n := cs.writes.Load() - before; n != 0 {
				t.Fatalf("a refused refresh wrote %d records", n)
			}
		})
	}
	// Both tokens still work for their own clients, and nothing was revoked.
	userID(t, env, rb.AccessToken)
	userID(t, env, theirs.AccessToken)
	c.mustRefresh(valid, nil)
	other.mustRefresh(theirs.RefreshToken, nil)

	// A JSON body is refused: the grant is form-encoded.
	resp, body := postJSON(t, env.URL+"/oauth/token", map[string]string{"grant_type": "refresh_token", "refresh_token": valid, "client_id": c.ID})
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
}

// A family lives 30 days from the original grant, however often it is
// rotated.
func TestRefreshFamilyExpiry(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := refreshClient(t, env)
	rb := c.offline(env.Browser("aging"))
	env.Clock.Advance(29 * 24 * time.Hour)
	rb = c.mustRefresh(rb.RefreshToken, nil)
	env.Clock.Advance(24*time.Hour - time.Second)
	rb = c.mustRefresh(rb.RefreshToken, nil) // 30 days less a second
	env.Clock.Advance(time.Second)
	resp, body := c.refresh(rb.RefreshToken, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	if !strings.Contains(string(body), "expired") {
		t.Fatalf("want an expiry error: %s", body)
	}
}

// Of 50 concurrent refreshes with one token exactly one succeeds, on each
// store; the others are invalid_grant, never 5xx.
func TestRefreshConcurrent(t *testing.T) {
	t.Parallel()
	for name, open := range storeBackends() {
		t.Run(name, func(t *testing.T) {
			const n = 50
			gs := &gatedStore{Store: open(t), n: n, all: make(chan struct{})}
			env := servertest.New(t, servertest.Options{Store: gs})
			c := refreshClient(t, env)
			rb := c.offline(env.Browser("racer"))
			gs.on.Store(true)
			statuses := make([]int, n)
			bodies := make([][]byte, n)
			errs := make([]error, n)
			start := make(chan struct{})
			done := make(chan struct{})
			for i := range n {
				go func() {
					defer func() { done <- struct{}{} }()
					<-start
					form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rb.RefreshToken}, "client_id": {c.ID}}
					resp, body, err := send(http.MethodPost, env.URL+"/oauth/token", "application/x-www-form-urlencoded", form.Encode(), nil)
					if err == nil {
						statuses[i] = resp.StatusCode
					}
					bodies[i], errs[i] = body, err
				}()
			}
			close(start)
			for range n {
				<-done
			}
			ok := 0
			for i := range n {
				switch {
				case errs[i] != nil:
					t.Fatal(errs[i])
				case statuses[i] == http.StatusOK:
					ok++
				case statuses[i] != http.StatusBadRequest || !strings.Contains(string(bodies[i]), `"invalid_grant"`):
					t.Errorf("request %d: %d %s", i, statuses[i], bodies[i])
				}
			}
			if ok != 1 {
				t.Fatalf("%d of %d concurrent refreshes succeeded, want exactly 1", ok, n)
			}
		})
	}
}

// gatedStore holds every GetRefreshToken, once on, until n callers have
// read the token (or a bound passes), so that all of them see it unspent
// and only the store's single-use rotation can stop them.
type gatedStore struct {
	store.Store
	on      atomic.Bool
	n       int32
	arrived atomic.Int32
	all     chan struct{}
}

func (g *gatedStore) GetRefreshToken(ctx context.Context, hash string) (store.RefreshToken, error) {
	t, err := g.Store.GetRefreshToken(ctx, hash)
	if g.on.Load() {
		if g.arrived.Add(1) == g.n {
			close(g.all)
		}
		select {
		case <-g.all:
		case <-time.After(2 * time.Second):
		}
	}
	return t, err
}

// hookStore runs before, once, ahead of the first CreateRefreshToken.
type hookStore struct {
	store.Store
	before atomic.Pointer[func()]
}

func (h *hookStore) CreateRefreshToken(ctx context.Context, t store.RefreshToken) error {
	if f := h.before.Swap(nil); f != nil {
		(*f)()
	}
	return h.Store.CreateRefreshToken(ctx, t)
}

// A replay of the code that lands between its redemption and the creation
// of the refresh token family (so it finds no family to revoke) still
// leaves no working refresh token: the redemption notices and revokes the
// family it just made.
func TestCodeReplayRacingRedemption(t *testing.T) {
	t.Parallel()
	hs := &hookStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: hs})
	c := refreshClient(t, env)
	u, v := c.authURL(url.Values{"scope": {"mcp offline_access"}})
	back, err := env.Browser("racy").Consent(context.Background(), u, "approve")
	if err != nil {
		t.Fatal(err)
	}
	code := back.Query().Get("code")
	replayed := make(chan int, 1)
	hook := func() {
		r, _, err := send(http.MethodPost, env.URL+"/oauth/token", "application/x-www-form-urlencoded", url.Values{
			"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI}, "client_id": {c.ID}, "code_verifier": {v},
		}.Encode(), nil)
		if err != nil {
			replayed <- 0
			return
		}
		replayed <- r.StatusCode
	}
	hs.before.Store(&hook)
	resp, body := c.exchange(code, v)
	if st := <-replayed; st != http.StatusBadRequest {
		t.Fatalf("the replay inside the redemption: status %d, want 400", st)
	}
	if resp.StatusCode == http.StatusOK {
		var rb refreshBody
		mustJSON(t, body, &rb)
		r2, b2 := c.refresh(rb.RefreshToken, nil)
		oauthErr(t, r2, b2, http.StatusBadRequest, "invalid_grant")
		return
	}
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}
