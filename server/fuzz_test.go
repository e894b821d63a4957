package server_test

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// RFC 6749 §5.2: error and error_description are %x20-21 / %x23-5B / %x5D-7E.
var oauthErrorChars = regexp.MustCompile(`^[\x20-\x21\x23-\x5B\x5D-\x7E]*$`)

// FuzzEndpoints sends fuzzed bodies, content types and queries through the
// real handler of every API endpoint, over loopback HTTP: never a 5xx; an
// RFC 6749-shaped JSON error (or an HTML page at the browser endpoint) for
// every 4xx; nothing stored when the request is refused; and the
// authorization endpoint never redirects anywhere but to this server or a
// registered redirect URI. "CLIENT" in the body or query stands for a
// registered client, so the fuzzer gets past the client lookup.
func FuzzEndpoints(f *testing.F) {
	cs := &countingStore{Store: memory.New()} // helpers_test.go
	env := servertest.New(f, servertest.Options{Store: cs, Limits: server.Limits{Disabled: true}, CacheCredentials: true})
	resp, err := http.Post(env.URL+"/oauth/register", "application/json", strings.NewReader(
		`{"redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code","urn:ietf:params:oauth:grant-type:device_code"]}`))
	if err != nil {
		f.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || reg.ClientID == "" {
		f.Fatalf("registering the fuzz client: %v", err)
	}
	resp.Body.Close()
	fill := strings.NewReplacer("CLIENT", reg.ClientID)
	hc := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	endpoints := []struct{ method, path string }{
		{"POST", "/oauth/register"}, {"POST", "/oauth/token"}, {"POST", "/api/oauth/device/code"},
		{"POST", "/api/oauth/device/token"}, {"GET", "/oauth/authorize"}, {"GET", "/api/ping"},
	}
	ctypes := []string{"application/json", "application/x-www-form-urlencoded", "text/plain", "", "application/json; charset=utf-8",
		"application/x-www-form-urlencoded; charset=utf-8", "multipart/form-data; boundary=x", "application/json; charset="}
	f.Add(uint8(0), uint8(0), `{"redirect_uris":["http://127.0.0.1/cb"]}`, "")
	f.Add(uint8(0), uint8(0), `{"redirect_uris":["com.example.app:/cb"],"grant_types":["authorization_code"],"client_name":"x","scope":"mcp"}`, "")
	f.Add(uint8(0), uint8(0), `{"redirect_uris":[],"grant_types":["urn:ietf:params:oauth:grant-type:device_code"]}`, "")
	f.Add(uint8(1), uint8(1), "grant_type=authorization_code&code=x&redirect_uri=http://127.0.0.1:9/cb&client_id=CLIENT&code_verifier="+strings.Repeat("v", 43), "")
	f.Add(uint8(1), uint8(1), "grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x&client_id=CLIENT", "")
	f.Add(uint8(2), uint8(0), `{"client_id":"CLIENT","scope":"mcp"}`, "")
	f.Add(uint8(2), uint8(1), `client_id=CLIENT`, "")
	f.Add(uint8(2), uint8(0), `{"client_id":"nobody"}`, "")
	f.Add(uint8(3), uint8(1), "grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x&client_id=CLIENT", "")
	f.Add(uint8(3), uint8(0), `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"x","client_id":"CLIENT"}`, "")
	f.Add(uint8(4), uint8(3), "", "response_type=code&client_id=CLIENT&redirect_uri=http://127.0.0.1:9/cb&state=s&code_challenge="+
		strings.Repeat("A", 43)+"&code_challenge_method=S256")
	f.Add(uint8(4), uint8(3), "", "response_type=token&client_id=CLIENT&redirect_uri=http://127.0.0.1:5/cb&state=%22%3Cx%3E")
	f.Add(uint8(4), uint8(3), "", "client_id=CLIENT&redirect_uri=http://127.0.0.1:5/cb%23")
	f.Add(uint8(5), uint8(3), "", "mcpa_xyz")
	f.Fuzz(func(t *testing.T, ep, ct uint8, body, extra string) {
		e := endpoints[int(ep)%len(endpoints)]
		u := env.URL + e.path
		if strings.IndexFunc(extra, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 && e.path != "/api/ping" {
			return // not a valid request line: net/http's own 400, before any handler
		}
		if e.path != "/api/ping" && extra != "" {
			u += "?" + fill.Replace(extra)
		}
		req, err := http.NewRequest(e.method, u, strings.NewReader(fill.Replace(body)))
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
		resp, err := hc.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) && strings.Contains(err.Error(), "invalid") {
				return // e.g. a header value net/http refuses to send
			}
			t.Fatalf("%s %s: %v", e.method, u, err)
		}
		defer resp.Body.Close()
		wrote := cs.writes.Load() != before
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("%s %s: status %d", e.method, e.path, resp.StatusCode)
		case e.path == "/oauth/authorize":
			if wrote {
				t.Fatalf("authorize without a session stored something (%d)", resp.StatusCode)
			}
			checkAuthorizeAnswer(t, env.URL, resp, ctype)
		case resp.StatusCode >= 400:
			if wrote {
				t.Fatalf("%s %s refused with %d but stored something", e.method, e.path, resp.StatusCode)
			}
			var oe struct {
				Error       *string `json:"error"`
				Description *string `json:"error_description"`
			}
			if ctype != "application/json" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s %s: %d with Content-Type %q, Cache-Control %q", e.method, e.path, resp.StatusCode, ctype, resp.Header.Get("Cache-Control"))
			}
			if json.NewDecoder(resp.Body).Decode(&oe) != nil || oe.Error == nil || *oe.Error == "" || !oauthErrorChars.MatchString(*oe.Error) {
				t.Fatalf("%s %s: %d without an RFC 6749 error body", e.method, e.path, resp.StatusCode)
			}
			if oe.Description != nil && !oauthErrorChars.MatchString(*oe.Description) {
				t.Fatalf("%s %s: error_description %q has characters RFC 6749 §5.2 forbids", e.method, e.path, *oe.Description)
			}
			if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") && e.path == "/api/ping" {
				t.Fatalf("401 from ping without a Bearer challenge")
			}
		case e.path == "/api/ping":
			t.Fatalf("ping accepted a fuzzed credential %q: %d", extra, resp.StatusCode)
		default:
			var obj map[string]any
			if ctype != "application/json" || json.NewDecoder(resp.Body).Decode(&obj) != nil {
				t.Fatalf("%s %s: %d without a JSON object", e.method, e.path, resp.StatusCode)
			}
		}
	})
}

// checkAuthorizeAnswer: the browser endpoint answers a 4xx with HTML, and
// redirects only to this server (login) or to the registered loopback
// redirect URI (any port), with an RFC 6749 error there.
func checkAuthorizeAnswer(t *testing.T, base string, resp *http.Response, ctype string) {
	t.Helper()
	switch {
	case resp.StatusCode >= 400:
		if ctype != "text/html" {
			t.Fatalf("authorize: %d with Content-Type %q, want an HTML page", resp.StatusCode, ctype)
		}
	case resp.StatusCode >= 300:
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatalf("authorize: unparseable Location %q", resp.Header.Get("Location"))
		}
		if !loc.IsAbs() {
			loc, _ = url.Parse(base + loc.String())
		}
		switch origin := loc.Scheme + "://" + loc.Host; {
		case origin == base:
		case loc.Scheme == "http" && loc.Hostname() == "127.0.0.1" && loc.Path == "/cb" && loc.User == nil:
			q := loc.Query()
			if q.Get("code") != "" {
				t.Fatalf("authorize issued a code without a session: %s", loc)
			}
			if !oauthErrorChars.MatchString(q.Get("error")) || q.Get("error") == "" || !oauthErrorChars.MatchString(q.Get("error_description")) {
				t.Fatalf("authorize redirected with a malformed error: %s", loc)
			}
		default:
			t.Fatalf("authorize redirected to %s, which is not registered", loc)
		}
	}
}
