package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

func TestTestClockEndpoint(t *testing.T) {
	t.Parallel()
	tc := clock.NewOffset(nil)
	srv, err := server.New(context.Background(), server.Config{BaseURL: "http://127.0.0.1", Store: memory.New(), TestClock: tc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	resp, body := do(t, "POST", hs.URL+"/api/test/clock", "application/json", `{"advance":"10m1s"}`, nil)
	var st struct {
		Now      string `json:"now"`
		OffsetMS int64  `json:"offset_ms"`
	}
	mustJSON(t, body, &st)
	if resp.StatusCode != 200 || st.OffsetMS != 601000 || tc.Offset().Milliseconds() != 601000 {
		t.Fatalf("advance: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"advance":"-1s"}`, `{"advance":"soon"}`, `{}`, `[`} {
		resp, body := do(t, "POST", hs.URL+"/api/test/clock", "application/json", bad, nil)
		oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
	}
	if tc.Offset().Milliseconds() != 601000 {
		t.Fatal("a rejected request moved the clock")
	}
	resp, body = do(t, "GET", hs.URL+"/api/test/clock", "", "", nil)
	mustJSON(t, body, &st)
	if resp.StatusCode != 200 || st.OffsetMS != 601000 {
		t.Fatalf("read: %d %s", resp.StatusCode, body)
	}

	// Without --test-clock the endpoint does not exist.
	env := servertest.New(t, servertest.Options{})
	if resp, _ := do(t, "POST", env.URL+"/api/test/clock", "application/json", `{"advance":"1h"}`, nil); resp.StatusCode != 404 {
		t.Fatalf("test clock reachable without TestClock: %d", resp.StatusCode)
	}
}

// A page on another site can post a form to a developer's loopback server
// without a preflight: the test clock takes only JSON, and never from a
// foreign Origin.
func TestTestClockRefusesCrossOrigin(t *testing.T) {
	t.Parallel()
	tc := clock.NewOffset(nil)
	srv, err := server.New(context.Background(), server.Config{BaseURL: "http://127.0.0.1:8080", Store: memory.New(), TestClock: tc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	evil := http.Header{"Origin": {"http://evil.example"}}
	resp, body := do(t, "POST", hs.URL+"/api/test/clock", "application/x-www-form-urlencoded", "advance=9000h", evil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = do(t, "POST", hs.URL+"/api/test/clock", "text/plain", `{"advance":"9000h"}`, evil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = do(t, "POST", hs.URL+"/api/test/clock", "application/json", `{"advance":"9000h"}`, evil)
	oauthErr(t, resp, body, http.StatusForbidden, "invalid_request")
	if tc.Offset() != 0 {
		t.Fatalf("a cross-origin request moved the clock by %s", tc.Offset())
	}
	same := http.Header{"Origin": {"http://127.0.0.1:8080"}}
	if resp, body := do(t, "POST", hs.URL+"/api/test/clock", "application/json", `{"advance":"1m"}`, same); resp.StatusCode != http.StatusOK {
		t.Fatalf("same-origin JSON: %d %s", resp.StatusCode, body)
	}
}
