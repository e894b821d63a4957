package creds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/internal/probe"
	"github.com/mcpauth/mcpauth/keyring"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is a real loopback authorization server (flowstest) and a real
// file-mode token store in a temporary directory, logged in once.
type rig struct {
	srv    *flowstest.Server
	clk    *flowstest.FakeClock
	dir    string
	server string // the storage key
	warned []string
	opens  int
}

// newRig logs in with the authorization code flow (offline_access, so a
// refresh token comes back) and stores the result as the CLI does. With
// dpop the server requires DPoP and the login binds its tokens to a key.
func newRig(t *testing.T, dpop bool) *rig {
	t.Helper()
	r := &rig{srv: flowstest.NewServer(t), clk: flowstest.NewFakeClock(t0), dir: t.TempDir()}
	r.srv.Clock, r.srv.DPoP = r.clk, dpop
	r.srv.PRMScopes = []string{"mcp", flows.ScopeOfflineAccess}
	ctx := context.Background()
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, r.srv.URL+"/mcp")
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	var key *flows.DPoP
	if dpop {
		if key, err = r.keeper().LoginKey(r.store(t), disc, false, false); err != nil || key == nil {
			t.Fatalf("LoginKey = %v, %v; want a key for a server that requires DPoP", key, err)
		}
	}
	client := flows.Client{ID: "cli", AuthMethod: flows.AuthMethodNone}
	tok, err := flows.AuthCode(ctx, flows.AuthCodeConfig{Clock: r.clk, Discovery: disc, Client: client, DPoP: key,
		Scope: "mcp " + flows.ScopeOfflineAccess, OpenBrowser: follow(t)})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if tok.RefreshToken == "" {
		t.Fatalf("login got no refresh token: %+v", tok)
	}
	if err := SaveLogin(r.store(t), "", disc, client, tok, key, User{ID: "u_1"}); err != nil {
		t.Fatal(err)
	}
	r.server = StoreKey(disc)
	return r
}

// follow is a browser that approves: flowstest's /authorize redirects to
// the loopback callback at once.
func follow(t *testing.T) func(string) error {
	return func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
}

func (r *rig) store(t *testing.T) *keyring.Store {
	t.Helper()
	st, err := keyring.Open(keyring.Config{Dir: r.dir, Storage: keyring.StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// keeper is what one CLI process builds: its own store handle.
func (r *rig) keeper() *Keeper {
	return &Keeper{
		Open: func() (Store, error) {
			r.opens++
			return keyring.Open(keyring.Config{Dir: r.dir, Storage: keyring.StorageFile})
		},
		HTTPClient: func() (*http.Client, error) { return &http.Client{Timeout: 10 * time.Second}, nil },
		Clock:      r.clk,
		Getenv:     func(string) string { return "" },
		Warn:       func(format string, args ...any) { r.warned = append(r.warned, fmt.Sprintf(format, args...)) },
	}
}

func (r *rig) bundle(t *testing.T) Bundle {
	t.Helper()
	b, err := Load(r.store(t), r.server, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (r *rig) refreshes() int { return r.srv.Count("/oauth/token", oauthwire.GrantTypeRefreshToken) }

// A live token is used as stored; one within the refresh margin is
// refreshed once, the rotated tokens are stored before use, and the next
// command uses them without another request.
func TestFreshRefreshesOnlyWhenExpiring(t *testing.T) {
	r := newRig(t, false)
	ctx := context.Background()
	before := r.bundle(t)
	c, err := r.keeper().Fresh(ctx, r.server)
	if err != nil || c.Token != before.AccessToken || r.refreshes() != 0 {
		t.Fatalf("live token: %+v, %v, %d refreshes", c, err, r.refreshes())
	}
	if c.BaseURL != r.srv.URL || c.Scope != before.Scope || c.Kind != KindOAuth {
		t.Errorf("credential %+v", c)
	}
	r.clk.Advance(time.Hour - 30*time.Second) // inside the 60 s margin
	c, err = r.keeper().Fresh(ctx, "")        // the only server: no argument needed
	after := r.bundle(t)
	if err != nil || r.refreshes() != 1 || c.Token == before.AccessToken || c.Token != after.AccessToken ||
		after.RefreshToken == before.RefreshToken || after.UserID != "u_1" || !after.Expiry.Equal(r.clk.Now().Add(time.Hour)) {
		t.Fatalf("expiring token: %+v, %v, %d refreshes; stored %v", c, err, r.refreshes(), after)
	}
	if c2, err := r.keeper().Fresh(ctx, r.server); err != nil || c2.Token != c.Token || r.refreshes() != 1 {
		t.Fatalf("next command: %+v, %v, %d refreshes", c2, err, r.refreshes())
	}
}

// Processes racing to refresh one entry redeem its refresh token once:
// the entry lock makes the others wait and read what the first stored.
// (flowstest revokes the whole family on reuse, so a second redemption
// would fail every racer after it.)
func TestFreshRefreshesOnceAcrossProcesses(t *testing.T) {
	r := newRig(t, false)
	r.clk.Advance(2 * time.Hour)
	const n = 6
	var wg sync.WaitGroup
	toks, errs := make([]string, n), make([]error, n)
	for i := range n {
		k := r.keeper()
		k.Open = func() (Store, error) {
			return keyring.Open(keyring.Config{Dir: r.dir, Storage: keyring.StorageFile})
		}
		wg.Go(func() {
			c, err := k.Fresh(context.Background(), r.server)
			toks[i], errs[i] = c.Token, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || toks[i] != toks[0] {
			t.Fatalf("racer %d: %q, %v (racer 0: %q)", i, toks[i], errs[i], toks[0])
		}
	}
	if got := r.refreshes(); got != 1 {
		t.Fatalf("%d refresh requests, want 1", got)
	}
}

// A refresh the server refuses is ErrAuthRequired with the login hint and
// leaves the entry as it was; a server that cannot be reached while the
// token still works is a warning and the current token; once the token
// has expired it is ErrRefresh.
func TestFreshFailures(t *testing.T) {
	ctx := context.Background()
	t.Run("refused", func(t *testing.T) {
		r := newRig(t, false)
		stale := r.bundle(t)
		r.clk.Advance(2 * time.Hour)
		if _, err := r.keeper().Fresh(ctx, r.server); err != nil {
			t.Fatal(err)
		}
		if err := Save(r.store(t), r.server, "", stale); err != nil { // put the spent refresh token back
			t.Fatal(err)
		}
		_, err := r.keeper().Fresh(ctx, r.server)
		var le *LoginError
		if !errors.Is(err, ErrAuthRequired) || !errors.Is(err, flows.ErrRefreshRefused) || !errors.As(err, &le) || le.Server != r.server {
			t.Fatalf("refused refresh: %v", err)
		}
		if strings.Contains(err.Error(), "mcpauth") { // the CLI names its command, not this package
			t.Errorf("the error names a command: %v", err)
		}
		if got := r.bundle(t); got.RefreshToken != stale.RefreshToken || got.AccessToken != stale.AccessToken {
			t.Errorf("the refused entry changed: %v", got)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		r := newRig(t, false)
		b := r.bundle(t)
		b.TokenEndpoint = "http://127.0.0.1:1/oauth/token"
		if err := Save(r.store(t), r.server, "", b); err != nil {
			t.Fatal(err)
		}
		r.clk.Advance(time.Hour - 30*time.Second)
		c, err := r.keeper().Fresh(ctx, r.server)
		if err != nil || c.Token != b.AccessToken || len(r.warned) != 1 || !strings.Contains(r.warned[0], "using the current one") {
			t.Fatalf("unreachable, token still valid: %+v, %v, warnings %q", c, err, r.warned)
		}
		r.clk.Advance(time.Minute)
		if _, err := r.keeper().Fresh(ctx, r.server); !errors.Is(err, ErrRefresh) || errors.Is(err, ErrAuthRequired) {
			t.Fatalf("unreachable, token expired: %v", err)
		}
	})
	t.Run("nothing stored", func(t *testing.T) {
		r := newRig(t, false)
		if _, err := r.keeper().Fresh(ctx, "http://127.0.0.1:1/mcp"); !errors.Is(err, ErrAuthRequired) {
			t.Fatalf("unknown server: %v", err)
		}
	})
}

// A token the resource refused is refreshed although it has not expired,
// unless another process replaced it already; an EnvToken is used as it is
// without opening the storage, and has nothing to retry with.
func TestRetryAndEnvToken(t *testing.T) {
	r := newRig(t, false)
	ctx := context.Background()
	c, err := r.keeper().Fresh(ctx, r.server)
	if err != nil {
		t.Fatal(err)
	}
	c2, ok, err := r.keeper().Retry(ctx, c)
	if err != nil || !ok || c2.Token == c.Token || r.refreshes() != 1 {
		t.Fatalf("retry of a rejected token: %+v, %v, %v, %d refreshes", c2, ok, err, r.refreshes())
	}
	c3, ok, err := r.keeper().Retry(ctx, c) // the rejected token was replaced meanwhile
	if err != nil || !ok || c3.Token != c2.Token || r.refreshes() != 1 {
		t.Fatalf("retry after another process refreshed: %+v, %v, %v, %d refreshes", c3, ok, err, r.refreshes())
	}

	k := r.keeper()
	k.EnvToken = "env-token"
	opens := r.opens
	env, err := k.Fresh(ctx, r.srv.URL+"/mcp")
	if err != nil || env.Token != "env-token" || !env.FromEnv || env.BaseURL != r.srv.URL || r.opens != opens {
		t.Fatalf("EnvToken: %+v, %v (storage opened %d times)", env, err, r.opens-opens)
	}
	if _, ok, err := k.Retry(ctx, env); ok || err != nil {
		t.Fatalf("retry of an EnvToken: %v, %v", ok, err)
	}
}

// Against a server that requires DPoP, the stored key is restored, the
// refresh is proved with it (the server refuses another key's proof for a
// bound refresh token), and the refreshed tokens stay bound to the same
// key; a later login to the same server reuses it.
func TestDPoPKeyKeptAcrossRefresh(t *testing.T) {
	r := newRig(t, true)
	ctx := context.Background()
	before := r.bundle(t)
	if before.TokenType != flows.TokenTypeDPoP || before.DPoPKey == "" {
		t.Fatalf("login stored %v", before)
	}
	proofs := r.srv.ProofsChecked
	r.clk.Advance(2 * time.Hour)
	c, err := r.keeper().Fresh(ctx, r.server)
	if err != nil || c.DPoP == nil || r.refreshes() != 1 {
		t.Fatalf("refresh of a bound token: %+v, %v, %d refreshes", c, err, r.refreshes())
	}
	after := r.bundle(t)
	if after.DPoPKey != before.DPoPKey || after.TokenType != flows.TokenTypeDPoP || r.srv.ProofsChecked <= proofs {
		t.Fatalf("after refresh: key kept %v, token type %s, %d proofs checked (before %d)", after.DPoPKey == before.DPoPKey, after.TokenType, r.srv.ProofsChecked, proofs)
	}
	if _, err := probe.Ping(ctx, c.DPoP.Client(nil, mustOrigin(t, r.srv.URL), c.Token), r.srv.URL, c.Token); err != nil {
		t.Fatalf("the refreshed token at the resource with the kept key: %v", err)
	}
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{}, r.srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	key, err := r.keeper().LoginKey(r.store(t), disc, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := key.MarshalKey(); k != before.DPoPKey {
		t.Error("a new login to the same server got a new DPoP key")
	}
	if key, err := r.keeper().LoginKey(r.store(t), disc, false, true); key != nil || err != nil {
		t.Errorf("refused DPoP: %v, %v", key, err)
	}
}

func mustOrigin(t *testing.T, u string) flows.Origin {
	t.Helper()
	o, err := flows.OriginOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The resource decides the binding, not the authorization server: a DPoP
// challenge (RFC 9449 §7.1) binds, an authorization server that merely
// advertises DPoP before a Bearer-only resource does not, and the flags
// override both.
func TestLoginKeyFollowsTheResource(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		bearerOnly            bool
		insist, refuse, bound bool
	}{
		{name: "resource offers DPoP", bound: true},
		{name: "resource offers DPoP, --no-dpop", refuse: true},
		{name: "only the AS offers DPoP", bearerOnly: true},
		{name: "only the AS offers DPoP, --dpop", bearerOnly: true, insist: true, bound: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &rig{srv: flowstest.NewServer(t), clk: flowstest.NewFakeClock(t0), dir: t.TempDir()}
			r.srv.DPoP, r.srv.ResourceBearerOnly = true, tt.bearerOnly
			disc, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, r.srv.URL+"/mcp")
			if err != nil {
				t.Fatal(err)
			}
			if disc.ResourceTakesDPoP() == tt.bearerOnly {
				t.Errorf("ResourceTakesDPoP = %v with challenge schemes %v", disc.ResourceTakesDPoP(), disc.ChallengeSchemes)
			}
			key, err := r.keeper().LoginKey(r.store(t), disc, tt.insist, tt.refuse)
			if err != nil || (key != nil) != tt.bound {
				t.Fatalf("LoginKey = %v, %v; want bound %v", key, err, tt.bound)
			}
		})
	}
}
