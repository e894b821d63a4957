package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The attacks of issue 30 (finding 3) against the bounds on metadata
// document fetching; every count is taken on the document host.

// nameClient sends one request naming clientID at an endpoint that
// resolves it: token (a code exchange), revoke, device (a device code) or
// authorize. Without a *testing.T, for goroutines.
func nameClient(env *servertest.Env, endpoint, clientID string) (*http.Response, []byte, error) {
	switch endpoint {
	case "token":
		return send(http.MethodPost, env.URL+"/oauth/token", "application/x-www-form-urlencoded", url.Values{
			"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {"http://127.0.0.1:4567/callback"},
			"client_id": {clientID}, "code_verifier": {strings.Repeat("v", 43)},
		}.Encode(), nil)
	case "revoke":
		return send(http.MethodPost, env.URL+"/oauth/revoke", "application/x-www-form-urlencoded",
			url.Values{"token": {"x"}, "client_id": {clientID}}.Encode(), nil)
	case "device":
		b, _ := json.Marshal(map[string]string{"client_id": clientID})
		return send(http.MethodPost, env.URL+"/api/oauth/device/code", "application/json", string(b), nil)
	case "authorize":
		q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:4567/callback"},
			"code_challenge": {strings.Repeat("A", 43)}, "code_challenge_method": {"S256"}, "state": {"s"}}
		return send(http.MethodGet, env.URL+"/oauth/authorize?"+q.Encode(), "", "", nil)
	}
	return nil, nil, fmt.Errorf("no endpoint %q", endpoint)
}

func mustName(t *testing.T, env *servertest.Env, endpoint, clientID string) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := nameClient(env, endpoint, clientID)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// errorCode is the RFC 6749 error in a JSON body, or "".
func errorCode(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}

// Attack (a): one failing URL named 300 times at the token endpoint, and
// another at revoke, costs one fetch each; every request still gets
// invalid_client. Once the failure cache runs out on the server's clock the
// URL is fetched again, and a document fixed meanwhile is accepted.
func TestCIMDFailingURLFetchedOncePerFailureCache(t *testing.T) {
	t.Parallel()
	const failureCache = 90 * time.Second
	host := newDocHost(t)
	env := cimdEnv(t, host, servertest.Options{MetadataDocuments: server.MetadataDocumentConfig{FailureCache: failureCache}})
	for _, endpoint := range []string{"token", "revoke"} {
		path := "/failing-" + endpoint + ".json"
		docURL := host.URL + path // not served yet: 404
		before := host.hits.Load()
		for i := range 300 {
			resp, body := mustName(t, env, endpoint, docURL)
			if resp.StatusCode != http.StatusUnauthorized || errorCode(body) != "invalid_client" {
				t.Fatalf("%s, request %d: %d %s, want 401 invalid_client", endpoint, i+1, resp.StatusCode, body)
			}
		}
		fetches := host.hits.Load() - before
		t.Logf("attack (a) at %s: one failing URL named 300 times: %d fetch(es)", endpoint, fetches)
		if fetches != 1 {
			t.Fatalf("%s: a failing URL named 300 times was fetched %d times, want once per failure cache", endpoint, fetches)
		}
	}

	docURL := host.URL + "/failing-token.json"
	env.Clock.Advance(failureCache - time.Second)
	mustName(t, env, "token", docURL)
	if n := host.hits.Load(); n != 2 {
		t.Fatalf("fetched again before the failure cache ran out: %d fetches in all, want 2", n)
	}
	host.serve("/failing-token.json", clientDoc(docURL), nil)
	env.Clock.Advance(time.Second)
	resp, body := mustName(t, env, "token", docURL)
	// The client is known now: the made-up code is what is refused.
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	if n := host.hits.Load(); n != 3 {
		t.Fatalf("%d fetches in all, want a third once the failure cache ran out", n)
	}
}

// Attack (b): 300 distinct URLs at authorize from one address. Each URL is
// a client of its own to the authorize limit, but every one that would be
// fetched is charged to the caller's fetch budget first: on a still clock,
// the burst is fetched and the rest get 429 with Retry-After.
func TestCIMDDistinctURLsBoundedPerIP(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	env := cimdEnv(t, host, servertest.Options{})
	burst := server.DefaultLimits().MetadataFetchPerIP.Burst
	limited := 0
	for i := range 300 {
		resp, body := mustName(t, env, "authorize", fmt.Sprintf("%s/distinct/%d.json", host.URL, i))
		switch {
		case i < burst:
			htmlPage(t, resp, body, http.StatusBadRequest) // the document is not found: the page says why
		default:
			htmlPage(t, resp, body, http.StatusTooManyRequests)
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			limited++
		}
	}
	fetches := host.hits.Load()
	t.Logf("attack (b): 300 distinct URLs at authorize from one IP: %d fetches (burst %d), %d answered 429", fetches, burst, limited)
	if fetches != int64(burst) {
		t.Fatalf("300 distinct URLs from one address: %d fetches, want the burst of %d", fetches, burst)
	}
	// The same budget covers every endpoint that resolves a URL.
	resp, body := mustName(t, env, "revoke", host.URL+"/distinct/more.json")
	oauthErr(t, resp, body, http.StatusTooManyRequests, "rate_limited")
	if host.hits.Load() != fetches {
		t.Fatal("revoke fetched past the spent budget")
	}
}

// gate holds a document host's answers until released, and measures how
// many requests it holds at once.
type gate struct {
	inFlight, max atomic.Int64
	release       chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) hold() {
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for m := g.max.Load(); n > m && !g.max.CompareAndSwap(m, n); m = g.max.Load() {
	}
	select {
	case <-g.release:
	case <-time.After(15 * time.Second): // a failed test must not hang
	}
}

// Attack (c): 100 concurrent requests at token, revoke and device code
// naming 100 slow documents. At most the cap (8 by default) are fetched at
// once; a request that finds no slot within the wait gets 503
// temporarily_unavailable with Retry-After, never a 500.
func TestCIMDConcurrentFetchesCapped(t *testing.T) {
	t.Parallel()
	const requests, maxFetches = 100, 8 // the default cap (README)
	host := newDocHost(t)
	g := newGate()
	host.hold = g.hold
	env := cimdEnv(t, host, servertest.Options{
		Limits:            server.Limits{MetadataFetchPerIP: server.Limit{Rate: 1000, Burst: 1000}}, // the cap alone
		MetadataDocuments: server.MetadataDocumentConfig{SlotWait: 300 * time.Millisecond, Timeout: 20 * time.Second},
	})
	type result struct {
		endpoint string
		status   int
		code     string
		retry    string
		err      error
	}
	results := make(chan result, requests)
	endpoints := []string{"token", "revoke", "device"}
	for i := range requests {
		go func() {
			ep := endpoints[i%len(endpoints)]
			resp, body, err := nameClient(env, ep, fmt.Sprintf("%s/slow/%d.json", host.URL, i))
			if err != nil {
				results <- result{endpoint: ep, err: err}
				return
			}
			results <- result{ep, resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), nil}
		}()
	}
	// Everything beyond the cap is answered while the held fetches wait.
	deadline := time.After(30 * time.Second)
	var got []result
	for len(got) < requests-maxFetches {
		select {
		case r := <-results:
			got = append(got, r)
		case <-deadline:
			t.Fatalf("only %d of %d requests answered while %d fetches were held", len(got), requests-maxFetches, g.inFlight.Load())
		}
	}
	held, most := g.inFlight.Load(), g.max.Load()
	close(g.release)
	for len(got) < requests {
		select {
		case r := <-results:
			got = append(got, r)
		case <-deadline:
			t.Fatalf("%d requests unanswered after the release", requests-len(got))
		}
	}
	t.Logf("attack (c): %d concurrent requests naming slow documents: at most %d fetches open at once (%d held), %d fetches in all",
		requests, most, held, host.hits.Load())
	if most != maxFetches || held != maxFetches {
		t.Fatalf("%d fetches open at once at most, %d held: want the cap, %d", most, held, maxFetches)
	}
	busy, refused := 0, 0
	for _, r := range got {
		switch {
		case r.err != nil:
			t.Fatalf("%s: %v", r.endpoint, r.err)
		case r.status == http.StatusServiceUnavailable && r.code == "temporarily_unavailable" && r.retry != "":
			busy++
		case r.status == http.StatusUnauthorized && r.code == "invalid_client": // fetched: not found
			refused++
		default:
			t.Fatalf("%s: %d %q (Retry-After %q), want 503 temporarily_unavailable or 401 invalid_client", r.endpoint, r.status, r.code, r.retry)
		}
	}
	if busy != requests-maxFetches || refused != maxFetches || host.hits.Load() != maxFetches {
		t.Fatalf("%d busy, %d fetched and refused, %d fetches: want %d, %d, %d", busy, refused, host.hits.Load(), requests-maxFetches, maxFetches, maxFetches)
	}
}

// Attack (d): concurrent requests for one slow URL share one fetch, and
// all of them get its result (here a valid document: the made-up code is
// what the token endpoint refuses).
func TestCIMDConcurrentFetchesOfOneURLCollapse(t *testing.T) {
	t.Parallel()
	const requests = 50
	host := newDocHost(t)
	g := newGate()
	host.hold = g.hold
	docURL := host.serve("/shared.json", clientDoc(host.URL+"/shared.json"), nil)
	env := cimdEnv(t, host, servertest.Options{
		Limits:            server.Limits{MetadataFetchPerIP: server.Limit{Rate: 1000, Burst: 1000}},
		MetadataDocuments: server.MetadataDocumentConfig{Timeout: 20 * time.Second},
	})
	var wg sync.WaitGroup
	statuses := make(chan string, requests)
	for range requests {
		wg.Go(func() {
			resp, body, err := nameClient(env, "token", docURL)
			if err != nil {
				statuses <- err.Error()
				return
			}
			statuses <- fmt.Sprintf("%d %s", resp.StatusCode, errorCode(body))
		})
	}
	// Hold the one fetch until it has surely started and the others have
	// had time to arrive; without the collapse each would fetch too.
	for i := 0; host.hits.Load() == 0; i++ {
		if i == 3000 {
			t.Fatal("the document host saw no fetch within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	close(g.release)
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != "400 invalid_grant" {
			t.Fatalf("a request sharing the fetch got %q, want 400 invalid_grant", s)
		}
	}
	t.Logf("attack (d): %d concurrent requests for one URL: %d fetch(es), at most %d open at once", requests, host.hits.Load(), g.max.Load())
	if n := host.hits.Load(); n != 1 {
		t.Fatalf("%d concurrent requests for one URL: %d fetches, want one", requests, n)
	}
}
