package server_test

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
)

// The metadata fetch budget over IPv6, through the real handlers on a [::1]
// listener: requests from ::1 itself spend the budget of ::/64, so ::2 finds
// it spent. Peers no loopback socket can have are given by a wrapper in
// front of the server, which sets RemoteAddr as the network would: nine
// addresses of one /64 share one budget (20 fetches, not 9 × 20 = 180),
// another /64 has its own, and IPv4 addresses are still counted one by one.
func TestMetadataFetchBudgetPerIPv6Prefix(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	} else {
		ln.Close()
	}
	host := newDocHost(t)
	var peer atomic.Pointer[string]
	env := cimdEnv(t, host, servertest.Options{Addr: "[::1]:0", Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := peer.Load(); p != nil {
				r.RemoteAddr = *p
			}
			h.ServeHTTP(w, r)
		})
	}})
	const burst = 20 // server.DefaultLimits().MetadataFetchPerIP.Burst
	n := 0
	// fetches names distinct documents from the peers in turn (nil: the
	// real one) and returns how many the server fetched.
	fetches := func(requests int, peers ...string) int64 {
		before := host.hits.Load()
		for i := range requests {
			if len(peers) > 0 {
				peer.Store(&peers[i%len(peers)])
			}
			n++
			resp, body := mustName(t, env, "authorize", fmt.Sprintf("%s/v6/%d.json", host.URL, n))
			if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("authorize: %d %s", resp.StatusCode, body)
			}
		}
		return host.hits.Load() - before
	}
	var one64 []string
	for i := range 9 {
		one64 = append(one64, fmt.Sprintf("[2001:db8:1:2::%x]:%d", i+1, 40000+i))
	}
	for _, step := range []struct {
		name     string
		requests int
		peers    []string
		want     int64
	}{
		{"::1 over the network", 30, nil, burst},
		{"::2, in ::1's /64", 5, []string{"[::2]:1234"}, 0},
		{"nine addresses of 2001:db8:1:2::/64", 9 * 30, one64, burst},
		{"2001:db8:1:3::1, another /64", 30, []string{"[2001:db8:1:3::1]:1"}, burst},
		{"two IPv4 addresses", 60, []string{"192.0.2.1:1", "192.0.2.2:1"}, 2 * burst},
	} {
		got := fetches(step.requests, step.peers...)
		t.Logf("%s: %d requests, %d fetches", step.name, step.requests, got)
		if got != step.want {
			t.Errorf("%s: %d fetches, want %d", step.name, got, step.want)
		}
	}
}
