package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// from returns a client whose connections leave from local address ip (a
// loopback address), so the server sees another caller.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// The authorize limit is per client and caller: anonymous requests naming a
// client from one address must not lock that client out for everyone else.
func TestAuthorizeLimitIsPerCaller(t *testing.T) {
	t.Parallel()
	limits := server.DefaultLimits()
	limits.AuthorizePerClient = server.Limit{Rate: 0.001, Burst: 3}
	env := servertest.New(t, servertest.Options{Limits: limits})
	c := register(t, env)
	authURL, _ := c.authURL(nil)
	status := func(hc *http.Client) int {
		resp, err := hc.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	attacker := from("127.0.0.2")
	for range 3 {
		status(attacker)
	}
	if got := status(attacker); got != http.StatusTooManyRequests {
		t.Fatalf("the flooding caller: %d, want 429", got)
	}
	if got := status(from("127.0.0.1")); got == http.StatusTooManyRequests {
		t.Fatal("another caller of the same client is locked out by the flood")
	}
}

// slowLookup makes the user-code lookup take as long as a busy database
// would, which is what widens a check-then-charge race.
type slowLookup struct{ store.Store }

func (s slowLookup) GetDeviceCodeByUserCode(ctx context.Context, hash string) (store.DeviceCode, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Store.GetDeviceCodeByUserCode(ctx, hash)
}

// Wrong user codes are charged atomically: of many concurrent wrong codes
// from one session, no more than the burst are ever looked up and judged
// "not valid"; the rest get 429.
func TestWrongUserCodeLimitHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: slowLookup{memory.New()}})
	b := env.Browser("racer")
	csrf := csrfToken(t, env, b)
	const attempts = 300
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		judged, throttled int
	)
	start := make(chan struct{})
	for i := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			form := url.Values{"csrf_token": {csrf}, "user_code": {"BCDF-" + string(rune('0'+i%10)) + "000"}, "action": {"lookup"}}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, env.URL+"/auth/device", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := noFollow(b).Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusBadRequest:
				judged++
			case http.StatusTooManyRequests:
				throttled++
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	close(start)
	wg.Wait()
	burst := server.DefaultLimits().WrongUserCodePerKey.Burst
	if judged > burst || judged+throttled != attempts {
		t.Fatalf("%d wrong codes judged, %d throttled of %d; at most %d may be judged", judged, throttled, attempts, burst)
	}
}
