package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/conformance/report"
	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/devidp"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// Several instances: two real `mcpauth serve` processes share one
// PostgreSQL database and one JWT key behind a small round-robin proxy on
// loopback, as they would behind a load balancer. One OpenID Connect
// provider serves both (the development provider, started here with a fixed
// client so both instances can use it).

const (
	jwtKey     = "multi-instance-test-key-0123456789abcdefghijklmnop"
	sealingKey = "multi-instance-sealing-key-0123456789abcdefghijk"
)

type instance struct {
	url string
	cmd *exec.Cmd
	out *bytes.Buffer
}

type cluster struct {
	dsn       string
	proxy     *httptest.Server
	instances []*instance
	next      atomic.Uint64
	only      atomic.Pointer[instance] // when set, every request goes there
}

// ServeHTTP forwards each request to the next instance, in turn; a request
// that cannot reach an instance (killed) goes to the next one.
func (c *cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 2<<20))
	if err != nil {
		http.Error(w, "proxy: reading body", http.StatusBadGateway)
		return
	}
	start := c.next.Add(1)
	for i := range uint64(len(c.instances)) {
		inst := c.instances[(start+i)%uint64(len(c.instances))]
		if only := c.only.Load(); only != nil {
			inst = only
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, inst.url+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			continue // instance down: try the next
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "proxy: no instance reachable", http.StatusBadGateway)
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpauth")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpauth/mcpauth/cmd/mcpauth").CombinedOutput()
	if err != nil {
		t.Fatalf("building mcpauth: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster starts n instances, each given the extra serve flags.
func startCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("several serve processes end to end: skipped with -short")
	}
	dsn := pgtest.FreshDB(t)
	bin := buildBinary(t)
	c := &cluster{dsn: dsn}
	c.proxy = httptest.NewServer(c)
	t.Cleanup(c.proxy.Close)

	// The provider shares the test clock through the same database.
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idp, err := devidp.Start(context.Background(), "127.0.0.1:0", devidp.Config{
		Clock: clock.NewSharedOffset(nil, st), ClientID: "mcpauth", ClientSecret: "multi-instance-secret",
		RedirectURIs: []string{c.proxy.URL + "/auth/callback"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })

	for range n {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		inst := &instance{url: "http://" + addr, out: &bytes.Buffer{}}
		args := []string{"serve", "--addr", addr, "--base-url", c.proxy.URL, "--db", dsn,
			"--oidc-issuer", idp.URL(), "--oidc-client-id", "mcpauth", "--oidc-client-secret", "multi-instance-secret",
			"--test-clock", "--log-level", "warn"}
		inst.cmd = exec.Command(bin, append(args, extra...)...)
		inst.cmd.Env = append(os.Environ(), "MCPAUTH_JWT_KEY="+jwtKey, "MCPAUTH_SEALING_KEY="+sealingKey)
		inst.cmd.Stdout, inst.cmd.Stderr = inst.out, inst.out
		if err := inst.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = inst.cmd.Process.Kill()
			_ = inst.cmd.Wait()
			if t.Failed() {
				t.Logf("instance %s output:\n%s", inst.url, inst.out)
			}
		})
		waitHealthy(t, inst.url)
		c.instances = append(c.instances, inst)
	}
	return c
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	for range 200 {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not become healthy", base)
}

func TestSeveralInstancesPassTheConformanceSuite(t *testing.T) {
	c := startCluster(t, 2)
	approver, err := approve.NewFormApprover(c.proxy.URL, "multi", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.Run(context.Background(), conformance.Target{
		BaseURL:  c.proxy.URL,
		Approver: approver,
		Clock:    &conformance.HTTPClock{URL: c.proxy.URL + "/api/test/clock"},
	}, conformance.Options{Destructive: true})
	sum := rep.Summary()
	t.Logf("suite through 2 instances: %+v", sum)
	// The instances run without --cimd-allow-private (as in production)
	// and without machine clients, so the metadata-document checks that
	// need the target to fetch from the suite's loopback host, and the
	// machine-client checks (covered by --local and server tests), skip,
	// saying so; any other skip is a gap.
	unexpectedSkips := 0
	for _, r := range rep.Results {
		expected := strings.Contains(r.Reason, "--cimd-private") || r.Unmet == conformance.NeedMachineClient
		if r.Verdict == conformance.VerdictSkip && !expected {
			unexpectedSkips++
		}
	}
	if rep.Failed() || sum.Fail > 0 || unexpectedSkips > 0 {
		var b strings.Builder
		_ = report.WriteText(&b, rep, report.TextOptions{})
		t.Fatalf("conformance through two instances failed:\n%s", b.String())
	}
}

func TestSeveralInstancesSingleUseAndKeys(t *testing.T) {
	c := startCluster(t, 2)
	ctx := context.Background()
	approver, err := approve.NewFormApprover(c.proxy.URL, "dana", nil)
	if err != nil {
		t.Fatal(err)
	}

	// 50 concurrent redemptions of one code, alternating between instances:
	// exactly one succeeds.
	clientID := register(t, c.proxy.URL, `{"client_name":"race","redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code","urn:ietf:params:oauth:grant-type:device_code"]}`)
	verifier, _ := pkce.NewVerifier()
	authURL := c.proxy.URL + "/oauth/authorize?" + url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"state": {"s"}, "code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
	}.Encode()
	back, err := approver.ApproveConsent(ctx, authURL)
	if err != nil {
		t.Fatal(err)
	}
	code := back.Query().Get("code")
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			resp, err := http.PostForm(c.proxy.URL+"/oauth/token", url.Values{
				"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {"http://127.0.0.1:9/cb"},
				"client_id": {clientID}, "code_verifier": {verifier},
			})
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d of 50 concurrent redemptions across two instances succeeded, want exactly 1", ok.Load())
	}

	// An API key regenerated through one instance fails on both at once.
	oldKey, newKey, err := approver.RegenerateAPIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range c.instances {
		if s := pingStatus(t, inst.url, oldKey); s != 401 {
			t.Errorf("old key on %s: %d, want 401", inst.url, s)
		}
		if s := pingStatus(t, inst.url, newKey); s != 200 {
			t.Errorf("new key on %s: %d, want 200", inst.url, s)
		}
	}
}

func TestKilledInstanceMidDeviceFlow(t *testing.T) {
	c := startCluster(t, 2)
	ctx := context.Background()
	clientID := register(t, c.proxy.URL, `{"client_name":"tv","grant_types":["urn:ietf:params:oauth:grant-type:device_code"]}`)
	// The device code is issued by the first instance, which then dies hard.
	resp, err := http.Post(c.instances[0].url+"/api/oauth/device/code", "application/json", strings.NewReader(`{"client_id":"`+clientID+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var dc struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	decodeJSON(t, resp, &dc)
	if err := c.instances[0].cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown
		t.Fatal(err)
	}
	_ = c.instances[0].cmd.Wait()

	approver, err := approve.NewFormApprover(c.proxy.URL, "eve", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := approver.ApproveDevice(ctx, c.proxy.URL+"/auth/device", dc.UserCode); err != nil {
		t.Fatalf("approving through the surviving instance: %v", err)
	}
	body := `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"` + dc.DeviceCode + `","client_id":"` + clientID + `"}`
	resp, err = http.Post(c.instances[1].url+"/api/oauth/device/token", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	decodeJSON(t, resp, &tok)
	if s := pingStatus(t, c.instances[1].url, tok.AccessToken); s != 200 {
		t.Fatalf("token from the survivor: ping %d", s)
	}
}

func register(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/oauth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	decodeJSON(t, resp, &out)
	return out.ClientID
}

func pingStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/ping", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// decodeJSON reads a 2xx JSON response into v.
func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}

// Refresh tokens across two instances on one PostgreSQL: of 20 concurrent
// refreshes with one token, spread over both, exactly one gets new tokens;
// the reuse that the others are revokes the family on both instances,
// access tokens included (RFC 9700 §4.14.2).
func TestSeveralInstancesRefreshSingleUse(t *testing.T) {
	c := startCluster(t, 2)
	ctx := context.Background()
	approver, err := approve.NewFormApprover(c.proxy.URL, "erin", nil)
	if err != nil {
		t.Fatal(err)
	}
	clientID := register(t, c.proxy.URL, `{"client_name":"refresh race","redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code","refresh_token"]}`)
	verifier, _ := pkce.NewVerifier()
	back, err := approver.ApproveConsent(ctx, c.proxy.URL+"/oauth/authorize?"+url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "scope": {"mcp offline_access"},
		"state": {"s"}, "code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(resp *http.Response) (access, refresh string) {
		defer resp.Body.Close()
		var tr struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&tr)
		return tr.AccessToken, tr.RefreshToken
	}
	resp, err := http.PostForm(c.proxy.URL+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"client_id": {clientID}, "code_verifier": {verifier},
	})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("exchange: %v %v", resp, err)
	}
	firstAccess, refresh := tokens(resp)
	if refresh == "" {
		t.Fatal("no refresh token issued for offline_access")
	}
	var (
		ok        atomic.Int32
		mu        sync.Mutex
		winnerTok string
		wg        sync.WaitGroup
	)
	for range 20 {
		wg.Go(func() {
			resp, err := http.PostForm(c.proxy.URL+"/oauth/token", url.Values{
				"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID},
			})
			if err != nil {
				t.Error(err)
				return
			}
			if resp.StatusCode == 200 {
				ok.Add(1)
				a, _ := tokens(resp)
				mu.Lock()
				winnerTok = a
				mu.Unlock()
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d of 20 concurrent refreshes across two instances succeeded, want exactly 1", ok.Load())
	}
	// The losers presented a spent token: the family is revoked, the access
	// tokens issued in it with it, on every instance.
	for _, inst := range c.instances {
		for name, tok := range map[string]string{"first access token": firstAccess, "winner's access token": winnerTok} {
			if s := pingStatus(t, inst.url, tok); s != 401 {
				t.Errorf("%s on %s after refresh reuse: %d, want 401", name, inst.url, s)
			}
		}
	}
}
