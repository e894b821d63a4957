package serve_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/pkce"
)

// An adversarial run against the real server (serve.Run, SQLite file, real
// timeouts but short ones): for a bounded time, slowloris connections that
// trickle headers, bodies that never finish, malformed and oversized
// requests hit it while valid clients keep working. Loopback only.
func TestAdversarialLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("adversarial load is not short")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	streams, _, _, _ := cmdutil.Test()
	ready := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, &serve.Options{
			IO: streams, Getenv: func(string) string { return "" }, Addr: addr, DB: filepath.Join(t.TempDir(), "db.sqlite"),
			DevIdPAddr: "127.0.0.1:0", LogFormat: "text", LogLevel: "error",
			ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
			Ready: func(u string) { ready <- u },
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}

	// Valid state created before the attack.
	approver, err := conformance.NewFormApprover(base, "victim", nil)
	if err != nil {
		t.Fatal(err)
	}
	apiKey, err := approver.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clientID := register(t, base, `{"client_name":"victim","redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code","urn:ietf:params:oauth:grant-type:device_code"]}`)
	verifier, _ := pkce.NewVerifier()
	back, err := approver.ApproveConsent(context.Background(), base+"/oauth/authorize?"+url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"state": {"s"}, "code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	earlyCode := back.Query().Get("code")

	http.DefaultClient.CloseIdleConnections()
	goroutinesBefore := settledGoroutines(0)
	heapBefore := heapInUse()
	idle := pingLatencies(t, base, apiKey, 50)

	// The attack, bounded in time.
	attackCtx, endAttack := context.WithTimeout(context.Background(), 5*time.Second)
	defer endAttack()
	var (
		wg         sync.WaitGroup
		fiveXX     atomic.Int64
		slowClosed atomic.Int64
		validLat   []time.Duration
		validMu    sync.Mutex
		conns      []net.Conn
		connsMu    sync.Mutex
	)
	keep := func(c net.Conn) {
		connsMu.Lock()
		conns = append(conns, c)
		connsMu.Unlock()
	}
	// 150 slowloris connections trickling header bytes, 50 unfinished bodies.
	for i := range 200 {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			keep(c)
			head := "GET /api/ping HTTP/1.1\r\nHost: x\r\n"
			if i >= 150 {
				head = "POST /oauth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n{\"client_name\":"
			}
			if _, err := c.Write([]byte(head)); err != nil {
				return
			}
			for attackCtx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
				if _, err := c.Write([]byte("X")); err != nil {
					slowClosed.Add(1) // the server hung up on us: good
					return
				}
			}
		})
	}
	// Junk: malformed, mistyped and oversized requests on every endpoint.
	junk := []struct{ method, path, ctype, body string }{
		{"POST", "/oauth/register", "application/json", `{"redirect_uris": [`},
		{"POST", "/oauth/token", "application/json", `{}`},
		{"POST", "/api/oauth/device/code", "text/plain", "\x00\xff"},
		{"POST", "/api/oauth/device/token", "application/x-www-form-urlencoded", "device_code=a&device_code=b"},
		{"POST", "/oauth/register", "application/json", strings.Repeat("[", 2<<20)},
		{"GET", "/oauth/authorize?client_id=%ff%00&redirect_uri=javascript:x", "", ""},
		{"GET", "/api/ping", "", ""},
	}
	for range 6 {
		wg.Go(func() {
			for attackCtx.Err() == nil {
				j := junk[rand.IntN(len(junk))]
				req, _ := http.NewRequestWithContext(attackCtx, j.method, base+j.path, strings.NewReader(j.body))
				if j.ctype != "" {
					req.Header.Set("Content-Type", j.ctype)
				}
				req.Header.Set("Authorization", "Bearer garbage.garbage.garbage")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					if resp.StatusCode >= 500 {
						fiveXX.Add(1)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	// Valid clients keep pinging.
	for range 3 {
		wg.Go(func() {
			for attackCtx.Err() == nil {
				t0 := time.Now()
				s := pingStatus(t, base, apiKey)
				validMu.Lock()
				validLat = append(validLat, time.Since(t0))
				validMu.Unlock()
				if s != 200 {
					fiveXX.Add(1)
					t.Errorf("valid ping during the attack: %d", s)
					return
				}
			}
		})
	}
	// Device codes approved during the attack: each yields exactly one token.
	tokens := make([]int, 6)
	for i := range tokens {
		wg.Go(func() {
			resp, err := http.Post(base+"/api/oauth/device/code", "application/json", strings.NewReader(`{"client_id":"`+clientID+`"}`))
			if err != nil {
				t.Error(err)
				return
			}
			var dc struct {
				DeviceCode string `json:"device_code"`
				UserCode   string `json:"user_code"`
			}
			decodeJSON(t, resp, &dc)
			a, _ := conformance.NewFormApprover(base, fmt.Sprintf("dev%d", i), nil)
			if err := a.ApproveDevice(context.Background(), base+"/auth/device", dc.UserCode); err != nil {
				t.Errorf("approving during the attack: %v", err)
				return
			}
			for range 2 {
				resp, err := http.Post(base+"/api/oauth/device/token", "application/json", strings.NewReader(
					`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"`+dc.DeviceCode+`","client_id":"`+clientID+`"}`))
				if err != nil {
					t.Error(err)
					return
				}
				if resp.StatusCode == 200 {
					tokens[i]++
				}
				resp.Body.Close()
			}
		})
	}
	<-attackCtx.Done()
	// Slow connections must have been cut by the server (read header 1 s,
	// read 2 s) well before the attack ended.
	connsMu.Lock()
	for _, c := range conns {
		c.Close()
	}
	connsMu.Unlock()
	wg.Wait()

	slices.Sort(validLat)
	p99 := validLat[len(validLat)*99/100]
	t.Logf("valid pings: idle p99 %s; under attack %d requests, p99 %s", idle[len(idle)*99/100], len(validLat), p99)
	if p99 > time.Second {
		t.Errorf("valid requests slowed to p99 %s under attack", p99)
	}
	if n := fiveXX.Load(); n > 0 {
		t.Errorf("%d responses were 5xx or failed", n)
	}
	if n := slowClosed.Load(); n < 150 {
		t.Errorf("only %d of 200 slow connections were closed by the server", n)
	}
	for i, n := range tokens {
		if n != 1 {
			t.Errorf("device code %d delivered %d tokens, want exactly 1", i, n)
		}
	}
	// The code issued before the attack is still there, exactly once.
	ok := 0
	for range 2 {
		resp, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {earlyCode},
			"redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {clientID}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			ok++
		}
		resp.Body.Close()
	}
	if ok != 1 {
		t.Errorf("the code issued before the attack exchanged %d times, want 1", ok)
	}
	if s := pingStatus(t, base, apiKey); s != 200 {
		t.Errorf("API key after the attack: %d", s)
	}
	http.DefaultClient.CloseIdleConnections()
	after := settledGoroutines(goroutinesBefore + 10)
	heapAfter := heapInUse()
	t.Logf("goroutines %d → %d; heap in use %d MiB → %d MiB", goroutinesBefore, after, heapBefore>>20, heapAfter>>20)
	if after > goroutinesBefore+10 {
		t.Errorf("goroutine leak: %d before, %d after the attack", goroutinesBefore, after)
	}
	if heapAfter > heapBefore+64<<20 {
		t.Errorf("heap grew from %d to %d MiB", heapBefore>>20, heapAfter>>20)
	}
}

func pingLatencies(t *testing.T, base, key string, n int) []time.Duration {
	var out []time.Duration
	for range n {
		t0 := time.Now()
		if s := pingStatus(t, base, key); s != 200 {
			t.Fatalf("ping: %d", s)
		}
		out = append(out, time.Since(t0))
	}
	slices.Sort(out)
	return out
}

// settledGoroutines waits (bounded) until the count is at most want, and
// returns it; want 0 just lets things settle once.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 60 && (want == 0 && i < 4 || n > want); i++ {
		time.Sleep(100 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
