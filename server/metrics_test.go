package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Real traffic over loopback against a server on a SQLite file (a code
// flow with a refresh and a replay, a device flow, a ping, each limiter but
// authorize tripped once), then a scrape of its metrics, served on their own
// listener as `mcpauth serve --metrics-addr` does: each counter moved by
// exactly what was done.
func TestMetricsCountRealTraffic(t *testing.T) {
	t.Parallel()
	st, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "mcpauth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := server.NewMetrics()
	// One registration, device code and wrong user code each: the second
	// is refused. The fake clock never refills the buckets.
	one := server.Limit{Rate: 1, Burst: 1}
	env := servertest.New(t, servertest.Options{Store: st, Metrics: m, Limits: server.Limits{RegisterPerIP: one, DeviceCodePerIP: one, WrongUserCodePerKey: one}})
	scrapeURL := httptest.NewServer(m.Handler()).URL + "/metrics"

	c := refreshClient(t, env)
	resp, body := postJSON(t, env.URL+"/oauth/register", map[string]any{"redirect_uris": []string{testRedirect}})
	oauthErr(t, resp, body, http.StatusTooManyRequests, "rate_limited")
	b := env.Browser("metered")
	first := c.offline(b)
	c.mustRefresh(first.RefreshToken, nil)
	resp, body = c.refresh(first.RefreshToken, nil) // spent: reuse
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	d := requestDeviceCode(t, env, c.ID)
	if page, err := b.Device(t.Context(), d.UserCode, "approve"); err != nil || page.Status != http.StatusOK {
		t.Fatalf("approving the device code: %v %v", page, err)
	}
	resp, body = pollDevice(t, env, c.ID, d.DeviceCode)
	mustToken(t, resp, body)
	resp, body = postJSON(t, env.URL+"/api/oauth/device/code", map[string]string{"client_id": c.ID})
	oauthErr(t, resp, body, http.StatusTooManyRequests, "rate_limited")
	wrong := url.Values{"csrf_token": {csrfToken(t, env, b)}, "user_code": {"BCDF-GHJK"}, "action": {"lookup"}}
	for _, want := range []int{http.StatusBadRequest, http.StatusTooManyRequests} {
		if resp, _ := browserPost(t, b, env.URL+"/auth/device", wrong); resp.StatusCode != want {
			t.Fatalf("wrong user code: HTTP %d, want %d", resp.StatusCode, want)
		}
	}
	key, err := env.Server.APIKeyForTest("u_metered")
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := ping(t, env, key); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: HTTP %d: %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, http.MethodGet, env.URL+"/no/such/page-"+c.ID, "", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: HTTP %d, want 404", resp.StatusCode)
	}
	if resp, _ := do(t, http.MethodGet, env.URL+"/metrics", "", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/metrics on the main listener: HTTP %d, want 404", resp.StatusCode)
	}

	s := servertest.ScrapeMetrics(t, scrapeURL)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/register", "code": "201"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/register", "code": "429"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "GET /api/ping", "code": "200"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/token", "code": "200"}, 2)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /oauth/token", "code": "400"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "/", "code": "404"}, 2)
	s.Check(t, "mcpauth_http_request_duration_seconds", map[string]string{"route": "GET /api/ping"}, 1)
	s.Check(t, "mcpauth_tokens_issued_total", map[string]string{"grant": "authorization_code"}, 1)
	s.Check(t, "mcpauth_tokens_issued_total", map[string]string{"grant": "refresh_token"}, 1)
	s.Check(t, "mcpauth_tokens_issued_total", map[string]string{"grant": "device_code"}, 1)
	s.Check(t, "mcpauth_refresh_token_reuse_total", map[string]string{}, 1)
	s.Check(t, "mcpauth_rate_limited_total", map[string]string{"limiter": "register"}, 1)
	s.Check(t, "mcpauth_rate_limited_total", map[string]string{"limiter": "device"}, 1)
	s.Check(t, "mcpauth_rate_limited_total", map[string]string{"limiter": "usercode"}, 1)
	s.Check(t, "mcpauth_rate_limited_total", map[string]string{"limiter": "authorize"}, 0)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /api/oauth/device/code", "code": "429"}, 1)
	s.Check(t, "mcpauth_http_requests_total", map[string]string{"route": "POST /auth/device", "code": "429"}, 1)
	s.Check(t, "mcpauth_store_operation_duration_seconds", map[string]string{"op": "CreateClient"}, 1)
	s.Check(t, "mcpauth_store_operation_duration_seconds", map[string]string{"op": "RotateRefreshToken"}, 1)
	s.Check(t, "mcpauth_store_operation_duration_seconds", map[string]string{"op": "RevokeRefreshFamily"}, 1)
	// Route labels are patterns: never a raw path, an id or a query.
	for _, route := range s.LabelValues("mcpauth_http_requests_total", "route") {
		if strings.Contains(route, c.ID) || strings.Contains(route, "?") || strings.Contains(route, "/no/such") {
			t.Errorf("route label %q is a raw path, not a pattern", route)
		}
	}
	if routes := s.LabelValues("mcpauth_http_request_duration_seconds", "route"); !slices.Contains(routes, "GET /oauth/authorize") {
		t.Errorf("latency routes %v lack GET /oauth/authorize", routes)
	}
	if _, ok := s.Value("go_goroutines", map[string]string{}); !ok {
		t.Error("the Go runtime collector is missing")
	}
}
