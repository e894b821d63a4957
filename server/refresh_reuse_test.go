package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// storeBackends open a fresh store of each kind; PostgreSQL only with
// MCPAUTH_TEST_POSTGRES_URL (scripts/with-postgres.sh).
func storeBackends() map[string]func(t *testing.T) store.Store {
	closing := func(t *testing.T, s *sqlstore.Store, err error) store.Store {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "mcpauth.db"))
			return closing(t, s, err)
		},
		"postgres": func(t *testing.T) store.Store {
			s, err := sqlstore.Open(t.Context(), pgtest.FreshDB(t))
			return closing(t, s, err)
		},
	}
}

// instances starts n servers on st with one clock, as instances behind a
// load balancer: whatever one rotation keeps, the others must find in st.
func instances(t *testing.T, st store.Store, interval time.Duration, n int) []*servertest.Env {
	clk := clock.NewFake(servertest.Start)
	envs := make([]*servertest.Env, n)
	for i := range envs {
		envs[i] = servertest.New(t, servertest.Options{Store: st, Clock: clk, RefreshReuseInterval: interval})
	}
	return envs
}

// issuerOf is the instance that signed the JWT tok: each test instance
// has a base URL of its own, and so its own issuer and audience, where
// real instances behind one load balancer share them.
func issuerOf(t *testing.T, envs []*servertest.Env, tok string) *servertest.Env {
	t.Helper()
	var claims struct {
		Iss string `json:"iss"`
	}
	parts := strings.Split(tok, ".")
	if len(parts) == 3 {
		if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
			_ = json.Unmarshal(b, &claims)
		}
	}
	for _, env := range envs {
		if env.URL == claims.Iss {
			return env
		}
	}
	t.Fatalf("no instance issued %q", claims.Iss)
	return nil
}

type raced struct {
	status int
	body   []byte
	err    error
}

// raceRefresh presents rt from one client per instance at once, each with
// its own HTTP client: processes without a lock between them.
func raceRefresh(envs []*servertest.Env, clientID, rt string) []raced {
	out := make([]raced, len(envs))
	start, done := make(chan struct{}), make(chan struct{})
	for i, env := range envs {
		go func() {
			defer func() { done <- struct{}{} }()
			hc := &http.Client{Timeout: 30 * time.Second}
			<-start
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}}
			resp, err := hc.PostForm(env.URL+"/oauth/token", form)
			if err != nil {
				out[i].err = err
				return
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			_, out[i].err = b.ReadFrom(resp.Body)
			out[i].status, out[i].body = resp.StatusCode, b.Bytes()
		}()
	}
	close(start)
	for range envs {
		<-done
	}
	return out
}

// Three clients without a shared lock refresh one family at once, each
// through its own instance. With a 10 s reuse interval all three get the
// same new pair, which works, and the family lives on; with 0 (strict)
// one wins and the others' reuse revokes the family, the winner's pair
// included.
func TestRefreshReuseIntervalConcurrentClients(t *testing.T) {
	t.Parallel()
	for name, open := range storeBackends() {
		for _, interval := range []time.Duration{10 * time.Second, 0} {
			t.Run(fmt.Sprintf("%s/%v", name, interval), func(t *testing.T) {
				// Every client reads the token unspent before any rotates.
				gs := &gatedStore{Store: open(t), n: 3, all: make(chan struct{})}
				envs := instances(t, gs, interval, 3)
				c := refreshClient(t, envs[0])
				first := c.offline(envs[0].Browser("trio"))
				user := userID(t, envs[0], first.AccessToken)
				gs.on.Store(true)
				res := raceRefresh(envs, c.ID, first.RefreshToken)
				gs.on.Store(false)
				if interval == 0 {
					strictRace(t, envs, c, first, res)
					return
				}
				var pair refreshBody
				for i, r := range res {
					if r.err != nil || r.status != http.StatusOK {
						t.Fatalf("client %d: %v %d %s", i, r.err, r.status, r.body)
					}
					var got refreshBody
					mustJSON(t, r.body, &got)
					if i == 0 {
						pair = got
					}
					if got.AccessToken != pair.AccessToken || got.RefreshToken != pair.RefreshToken || got.Scope != "mcp offline_access" || got.ExpiresIn != 86400 {
						t.Fatalf("client %d got another pair than client 0 (or scope %q, expires_in %d)", i, got.Scope, got.ExpiresIn)
					}
					if u := userID(t, issuerOf(t, envs, got.AccessToken), got.AccessToken); u != user {
						t.Fatalf("client %d's token is for %s, want %s", i, u, user)
					}
				}
				if pair.RefreshToken == first.RefreshToken || pair.AccessToken == first.AccessToken {
					t.Fatal("the refresh issued nothing new")
				}
				// A fourth, later presentation (the token is spent by then)
				// gets the same pair too.
				late := &testClient{t: t, env: envs[2], ID: c.ID}
				resp, body := late.refresh(first.RefreshToken, nil)
				mustToken(t, resp, body)
				var again refreshBody
				mustJSON(t, body, &again)
				if again.AccessToken != pair.AccessToken || again.RefreshToken != pair.RefreshToken {
					t.Fatal("a later reuse within the interval got another pair")
				}
				// The store holds the pair sealed, never in the clear.
				rt, err := gs.GetRefreshToken(t.Context(), sha256Hex(first.RefreshToken))
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range []string{pair.AccessToken, pair.RefreshToken, pair.AccessToken[strings.LastIndexByte(pair.AccessToken, '.')+1:]} {
					if len(rt.Successor) == 0 || bytes.Contains(rt.Successor, []byte(secret)) {
						t.Fatalf("the kept pair is missing or readable in the store (%d bytes)", len(rt.Successor))
					}
				}
				// The family is not revoked: the old access token and the pair
				// work, and the new refresh token rotates as usual.
				userID(t, envs[0], first.AccessToken)
				next := (&testClient{t: t, env: envs[1], ID: c.ID}).mustRefresh(pair.RefreshToken, nil)
				userID(t, envs[1], next.AccessToken)
				userID(t, issuerOf(t, envs, pair.AccessToken), pair.AccessToken)
			})
		}
	}
}

// strictRace checks a race without a reuse interval: one refresh wins, the
// others are invalid_grant, and their reuse revoked the family, the
// winner's pair included.
func strictRace(t *testing.T, envs []*servertest.Env, c *testClient, first refreshBody, res []raced) {
	t.Helper()
	var won []refreshBody
	for i, r := range res {
		switch {
		case r.err != nil:
			t.Fatal(r.err)
		case r.status == http.StatusOK:
			var got refreshBody
			mustJSON(t, r.body, &got)
			won = append(won, got)
		case r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte(`"invalid_grant"`)):
			t.Fatalf("client %d: %d %s", i, r.status, r.body)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d of %d refreshes succeeded, want 1", len(won), len(res))
	}
	for _, tok := range []string{first.AccessToken, won[0].AccessToken} {
		env := issuerOf(t, envs, tok)
		resp, body := ping(t, env, tok)
		wantChallenge(t, env, resp, body, true)
	}
	resp, body := c.refresh(won[0].RefreshToken, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}

// A reuse stops being answered with the pair, and revokes the family, once
// the interval is over (it runs from the rotation, on the server's clock:
// 9 s later the pair, 11 s later revocation), and once the family has
// rotated on (only its latest rotation is reusable), however soon.
func TestRefreshReuseEnds(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{RefreshReuseInterval: 10 * time.Second})
	c := refreshClient(t, env)
	b := env.Browser("late")
	first := c.offline(b)
	second := c.mustRefresh(first.RefreshToken, nil)
	env.Clock.Advance(9 * time.Second)
	resp, body := c.refresh(first.RefreshToken, nil)
	mustTokenAged(t, resp, body, 9*time.Second)
	var again refreshBody
	mustJSON(t, body, &again)
	if again.AccessToken != second.AccessToken || again.RefreshToken != second.RefreshToken || again.Scope != second.Scope {
		t.Fatal("reuse 9 s after the rotation: another pair")
	}
	env.Clock.Advance(2 * time.Second)
	wantReuseRevokes(t, env, c, first.RefreshToken, second)

	first = c.offline(b)
	second = c.mustRefresh(first.RefreshToken, nil)
	third := c.mustRefresh(second.RefreshToken, nil)
	env.Clock.Advance(time.Second)
	wantReuseRevokes(t, env, c, first.RefreshToken, third)
}

// wantReuseRevokes presents the spent token and wants it refused, and the
// family's live pair revoked with it.
func wantReuseRevokes(t *testing.T, env *servertest.Env, c *testClient, spent string, live refreshBody) {
	t.Helper()
	resp, body := c.refresh(spent, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = ping(t, env, live.AccessToken)
	wantChallenge(t, env, resp, body, true)
	resp, body = c.refresh(live.RefreshToken, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}

// The interval is bounded: a spent token must not stay worth the live pair
// for long.
func TestRefreshReuseIntervalBounds(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{-time.Second, server.MaxRefreshReuseInterval + time.Millisecond} {
		_, err := server.New(context.Background(), server.Config{BaseURL: "http://127.0.0.1:1", Store: memory.New(), RefreshReuseInterval: d})
		if err == nil || !strings.Contains(err.Error(), "refresh reuse interval") {
			t.Errorf("interval %v: New returned %v, want it refused", d, err)
		}
	}
}
