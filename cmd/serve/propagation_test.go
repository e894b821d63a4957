package serve_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/pkce"
)

// How long after a revocation, an API key regeneration or a refresh token
// replay on instance A the credential is refused on instance B, which had
// it cached: two real `mcpauth serve` processes on one PostgreSQL, B under
// ping load. docs/server.md "Several instances" states the bound this
// checks; the figures are logged (go test -v -run Propagation).
const (
	propagationSamples    = 100 // per kind, B's listener connected
	propagationCutSamples = 10  // per kind, B's listener cut just before the change
	// propagationBound is the documented worst case (the listener's
	// heartbeat, 0.5 s + 1 s), with room for a loaded machine.
	propagationBound = 2 * time.Second
)

func TestSeveralInstancesPropagation(t *testing.T) {
	c := startCluster(t, 2, "--no-rate-limits") // a hundred sign-ins a minute
	ctx := context.Background()
	a, b := c.instances[0], c.instances[1]
	c.only.Store(a) // every write of the test goes to A
	db, err := sql.Open("pgx", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	approver, err := approve.NewFormApprover(c.proxy.URL, "prop", nil)
	if err != nil {
		t.Fatal(err)
	}
	clientID := register(t, c.proxy.URL, `{"client_name":"prop","redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code","refresh_token"]}`)
	g := &granter{t: t, c: c, approver: approver, clientID: clientID}
	key, err := approver.APIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Load on B: other credentials, pinged without pause.
	loadKey := mustKey(t, c, "load")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_ = pingStatus(t, b.url, loadKey)
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()

	cut := func() {
		n := 0
		for try := 0; try < 100 && n == 0; try++ { // B may be between connections still
			if try > 0 {
				time.Sleep(20 * time.Millisecond)
			}
			// The name is matched first, in a subquery of its own: a
			// condition beside it could terminate every backend, this one
			// included.
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT pid FROM pg_stat_activity WHERE application_name = $1 OFFSET 0) b
				WHERE pg_terminate_backend(b.pid)`, "mcpauth-invalidations-"+strconv.Itoa(b.cmd.Process.Pid)).Scan(&n); err != nil {
				t.Fatal(err)
			}
		}
		if n != 1 {
			t.Fatalf("B's listener: %d backends cut, want 1", n)
		}
	}
	kinds := []struct {
		name string
		// prepare returns a credential cached on B and the change on A
		// that must make B refuse it.
		prepare func() (cred string, change func())
	}{
		{"revocation (RFC 7009)", func() (string, func()) {
			access, _ := g.grant("mcp")
			return access, func() { g.revoke(a.url, access) }
		}},
		{"API key regeneration", func() (string, func()) {
			old := key
			return old, func() {
				var err error
				if _, key, err = approver.RegenerateAPIKey(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"refresh token replay", func() (string, func()) {
			_, spent := g.grant("mcp offline_access")
			access, _ := g.refresh(spent, 200)
			return access, func() { g.refresh(spent, 400) }
		}},
	}
	for _, withCut := range []bool{false, true} {
		for _, k := range kinds {
			n := propagationSamples
			if withCut {
				n = propagationCutSamples
			}
			var took []time.Duration
			for range n {
				cred, change := k.prepare()
				waitStatus(t, b.url, cred, 200, 5*time.Second) // B may still be resyncing from the last cut
				if withCut {
					cut()
				}
				change()
				start := time.Now()
				waitStatus(t, b.url, cred, 401, 10*time.Second)
				took = append(took, time.Since(start))
			}
			p50, p99, worst := percentiles(took)
			t.Logf("%-24s cut=%-5v n=%3d  refused on B after p50 %v  p99 %v  worst %v", k.name, withCut, n, p50, p99, worst)
			if worst > propagationBound {
				t.Errorf("%s (cut=%v): refused on B only after %v, beyond the documented %v", k.name, withCut, worst, propagationBound)
			}
		}
	}
}

// waitStatus pings base with cred until it answers want.
func waitStatus(t *testing.T, base, cred string, want int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for pingStatus(t, base, cred) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %d within %v", base, want, limit)
		}
	}
}

func percentiles(d []time.Duration) (p50, p99, worst time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}

func mustKey(t *testing.T, c *cluster, user string) string {
	t.Helper()
	ap, err := approve.NewFormApprover(c.proxy.URL, user, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ap.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// granter obtains tokens through the proxy (so from A) with the
// authorization code flow, and refreshes and revokes them.
type granter struct {
	t        *testing.T
	c        *cluster
	approver *approve.FormApprover
	clientID string
}

func (g *granter) grant(scope string) (access, refresh string) {
	g.t.Helper()
	verifier, _ := pkce.NewVerifier()
	back, err := g.approver.ApproveConsent(context.Background(), g.c.proxy.URL+"/oauth/authorize?"+url.Values{
		"response_type": {"code"}, "client_id": {g.clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "scope": {scope},
		"state": {"s"}, "code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
	}.Encode())
	if err != nil {
		g.t.Fatal(err)
	}
	return g.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"client_id": {g.clientID}, "code_verifier": {verifier},
	}, 200)
}

func (g *granter) refresh(refresh string, want int) (access, next string) {
	g.t.Helper()
	return g.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {g.clientID}}, want)
}

func (g *granter) token(form url.Values, want int) (access, refresh string) {
	g.t.Helper()
	resp, err := http.PostForm(g.c.proxy.URL+"/oauth/token", form)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tr)
	if resp.StatusCode != want {
		g.t.Fatalf("token endpoint (%s): %d, want %d", form.Get("grant_type"), resp.StatusCode, want)
	}
	return tr.AccessToken, tr.RefreshToken
}

func (g *granter) revoke(base, token string) {
	g.t.Helper()
	resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"token": {token}, "client_id": {g.clientID}})
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		g.t.Fatal(fmt.Sprintf("revoke: %d", resp.StatusCode))
	}
}
