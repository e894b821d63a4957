package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// proxyAddr is where the test's reverse proxy connects to the server from:
// the only address trusted in these tests. Clients are other loopback
// addresses (127.0.0.2, 127.0.0.3, ...), which Linux routes as it does
// 127.0.0.1, so each is a distinct machine to the proxy.
const proxyAddr = "127.0.0.9"

var trustProxy = []netip.Prefix{netip.MustParsePrefix(proxyAddr + "/32")}

// newForwardingProxy is a reverse proxy in front of env configured as the
// docs tell nginx to be: it appends the peer it sees to X-Forwarded-For
// ($proxy_add_x_forwarded_for), passes on whatever else the client sent,
// and sets X-Forwarded-Proto and X-Forwarded-Host, which the server must
// not read. It returns the proxy's host:port.
func newForwardingProxy(t *testing.T, env *servertest.Env) string {
	t.Helper()
	target, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(proxyAddr)}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			peer, _, _ := net.SplitHostPort(pr.In.RemoteAddr)
			pr.Out.Header.Set("X-Forwarded-For", strings.Join(append(pr.In.Header.Values("X-Forwarded-For"), peer), ", "))
			pr.Out.Header.Set("X-Forwarded-Proto", "https")
			pr.Out.Header.Set("X-Forwarded-Host", "elsewhere.example")
		},
		Transport: &http.Transport{DialContext: d.DialContext},
	}
	ps := httptest.NewServer(rp)
	t.Cleanup(ps.Close)
	return ps.Listener.Addr().String()
}

// behind returns a transport for a machine at local address ip: its
// connections to env go to proxy (as DNS would send them), or straight to
// the server when proxy is "".
func behind(env *servertest.Env, proxy, ip string) *http.Transport {
	server := strings.TrimPrefix(env.URL, "http://")
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == server && proxy != "" {
			addr = proxy
		}
		return d.DialContext(ctx, network, addr)
	}}
}

// deviceCodeStatus posts to the device code endpoint, whose per-IP limit
// is charged before the request is read, with extra headers.
func deviceCodeStatus(t *testing.T, env *servertest.Env, rt http.RoundTripper, hdr http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.URL+"/api/oauth/device/code", strings.NewReader(`{"client_id":"nobody"}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// spoofing is the headers a client sends to pass as someone new each time.
func spoofing(i int) http.Header {
	return http.Header{
		"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i)},
		"Forwarded":       {fmt.Sprintf("for=198.51.100.%d", i)},
		"X-Real-Ip":       {fmt.Sprintf("198.51.100.%d", i)},
	}
}

func tightDeviceCodeLimit() server.Limits {
	limits := server.DefaultLimits()
	limits.DeviceCodePerIP = server.Limit{Rate: 0.001, Burst: 3}
	return limits
}

// A client that is not a trusted proxy cannot choose its budget with
// forwarding headers, whether it talks to the server directly or through
// the trusted proxy (which appends the address it really has).
func TestSpoofedForwardingFromUntrustedPeerIsIgnored(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Limits: tightDeviceCodeLimit(), TrustedProxies: trustProxy})
	proxy := newForwardingProxy(t, env)
	xffOnly := func(i int) http.Header { return http.Header{"X-Forwarded-For": spoofing(i)["X-Forwarded-For"]} }
	for _, tc := range []struct {
		name  string
		rt    http.RoundTripper
		spoof func(int) http.Header
	}{
		{"direct", behind(env, "", "127.0.0.2"), spoofing},
		// The proxy appends 127.0.0.3: the right-most untrusted hop.
		{"through the proxy, X-Forwarded-For", behind(env, proxy, "127.0.0.3"), xffOnly},
		// Forwarded passed through names another client than the proxy's
		// X-Forwarded-For: neither is believed, the proxy's budget is spent.
		{"through the proxy, Forwarded too", behind(env, proxy, "127.0.0.4"), spoofing},
	} {
		for i := range 3 {
			if got := deviceCodeStatus(t, env, tc.rt, tc.spoof(i)); got == http.StatusTooManyRequests {
				t.Fatalf("%s: request %d refused early", tc.name, i+1)
			}
		}
		if got := deviceCodeStatus(t, env, tc.rt, tc.spoof(99)); got != http.StatusTooManyRequests {
			t.Errorf("%s: a 4th request with a new forwarded address: %d, want 429 (the burst is 3)", tc.name, got)
		}
	}
}

// Behind the trusted proxy, two machines get a budget each; without
// trusting it, they share the proxy's, as before --trusted-proxies.
func TestTrustedProxySeparatesClientBudgets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		shared  bool
	}{{"trusted", trustProxy, false}, {"not trusted", nil, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{Limits: tightDeviceCodeLimit(), TrustedProxies: tc.trusted})
			proxy := newForwardingProxy(t, env)
			alice, bob := behind(env, proxy, "127.0.0.2"), behind(env, proxy, "127.0.0.3")
			for range 3 {
				deviceCodeStatus(t, env, alice, nil)
			}
			if got := deviceCodeStatus(t, env, alice, nil); got != http.StatusTooManyRequests {
				t.Fatalf("alice's 4th request: %d, want 429", got)
			}
			if got := deviceCodeStatus(t, env, bob, nil) == http.StatusTooManyRequests; got != tc.shared {
				t.Fatalf("bob refused: %v, want %v", got, tc.shared)
			}
		})
	}
}

// The reported incident: behind one proxy, two users type wrong device
// codes and a third, entering the right code in their own session, was
// told "Too many wrong codes". With the proxy trusted, each user's typos
// spend only their own budget: the third user connects the device, while
// a user who keeps guessing is stopped, in any session from their address.
func TestWrongUserCodesBehindProxyLockOutOnlyTheirAuthor(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{TrustedProxies: trustProxy})
	proxy := newForwardingProxy(t, env)
	ctx := context.Background()
	user := func(name, ip string) *servertest.Browser {
		b := env.Browser(name)
		b.Client.Transport = behind(env, proxy, ip)
		return b
	}
	typos := func(b *servertest.Browser, n int) {
		t.Helper()
		for i := range n {
			page, err := b.Device(ctx, fmt.Sprintf("BCDF-%d", 1000+i), "approve")
			if err != nil {
				t.Fatal(err)
			}
			if page.Status != http.StatusBadRequest {
				t.Fatalf("%s's wrong code %d: status %d, want 400", b.Username, i+1, page.Status)
			}
		}
	}
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	alice, bob, carol := user("alice", "127.0.0.2"), user("bob", "127.0.0.3"), user("carol", "127.0.0.4")
	burst := server.DefaultLimits().WrongUserCodePerKey.Burst
	typos(alice, burst/2+1)
	typos(bob, burst/2+1) // together over the burst: one shared budget would be spent

	page, err := carol.Device(ctx, d.UserCode, "approve")
	if err != nil {
		t.Fatal(err)
	}
	if page.Status != http.StatusOK || !bytes.Contains(page.Body, []byte(`Device connected`)) {
		t.Fatalf("carol's right code: status %d, want the device connected: %.300s", page.Status, page.Body)
	}
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	mustToken(t, resp, body)

	typos(alice, burst-(burst/2+1))
	for _, b := range []*servertest.Browser{alice, user("alice-again", "127.0.0.2")} {
		page, err := b.Device(ctx, "BCDF-2000", "approve")
		if err != nil {
			t.Fatal(err)
		}
		if page.Status != http.StatusTooManyRequests {
			t.Fatalf("%s after %d wrong codes from 127.0.0.2: status %d, want 429", b.Username, burst, page.Status)
		}
	}
}

// The scheme and host stay --base-url's, even from the trusted proxy: its
// X-Forwarded-Proto and X-Forwarded-Host change no URL the server gives.
func TestTrustedProxyDoesNotChangeBaseURL(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{TrustedProxies: trustProxy})
	proxy := newForwardingProxy(t, env)
	hc := &http.Client{Transport: behind(env, proxy, "127.0.0.2")}
	resp, err := hc.Get(env.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	mustJSON(t, body, &meta)
	if meta.Issuer != env.URL || meta.TokenEndpoint != env.URL+"/oauth/token" {
		t.Fatalf("through the proxy: issuer %q token endpoint %q, want %s", meta.Issuer, meta.TokenEndpoint, env.URL)
	}
}
