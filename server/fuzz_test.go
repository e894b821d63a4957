package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// FuzzEndpoints sends fuzzed bodies, content types and queries through the
// real handler of every API endpoint: never a 5xx, an RFC 6749-shaped JSON
// error for every 4xx, and nothing stored when the request is refused.
func FuzzEndpoints(f *testing.F) {
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(f, servertest.Options{Store: cs})
	endpoints := []struct{ method, path string }{
		{"POST", "/oauth/register"}, {"POST", "/oauth/token"}, {"POST", "/api/oauth/device/code"},
		{"POST", "/api/oauth/device/token"}, {"GET", "/oauth/authorize"}, {"GET", "/api/ping"},
	}
	ctypes := []string{"application/json", "application/x-www-form-urlencoded", "text/plain", "", "application/json; charset=utf-8"}
	f.Add(uint8(0), uint8(0), `{"redirect_uris":["http://127.0.0.1/cb"]}`, "")
	f.Add(uint8(1), uint8(1), "grant_type=authorization_code&code=x&redirect_uri=y&client_id=z&code_verifier=v", "")
	f.Add(uint8(2), uint8(0), `{"client_id":"nobody"}`, "")
	f.Add(uint8(3), uint8(1), "grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x&client_id=y", "")
	f.Add(uint8(4), uint8(3), "", "response_type=code&client_id=x&redirect_uri=http://127.0.0.1/cb")
	f.Add(uint8(5), uint8(3), "", "mcpa_xyz")
	f.Fuzz(func(t *testing.T, ep, ct uint8, body, extra string) {
		e := endpoints[int(ep)%len(endpoints)]
		u := env.URL + e.path
		if e.method == "GET" && e.path == "/oauth/authorize" {
			u += "?" + extra
		}
		req, err := http.NewRequest(e.method, u, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		if c := ctypes[int(ct)%len(ctypes)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		if e.path == "/api/ping" {
			req.Header.Set("Authorization", "Bearer "+extra)
		}
		before := cs.writes.Load()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // e.g. a header value net/http refuses to send
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s: status %d", e.method, e.path, resp.StatusCode)
		}
		if resp.StatusCode >= 400 {
			if cs.writes.Load() != before {
				t.Fatalf("%s %s refused with %d but stored something", e.method, e.path, resp.StatusCode)
			}
			if e.path != "/oauth/authorize" {
				var oe struct {
					Error string `json:"error"`
				}
				if json.NewDecoder(resp.Body).Decode(&oe) != nil || oe.Error == "" {
					t.Fatalf("%s %s: %d without an RFC 6749 error body", e.method, e.path, resp.StatusCode)
				}
			}
		}
	})
}
