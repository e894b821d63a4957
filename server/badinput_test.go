package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// countingStore counts successful writes, so a test can assert that a
// rejected request stored nothing.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (c *countingStore) count(err error) error {
	if err == nil {
		c.writes.Add(1)
	}
	return err
}

func (c *countingStore) CreateClient(ctx context.Context, cl store.Client) error {
	return c.count(c.Store.CreateClient(ctx, cl))
}
func (c *countingStore) CreateAuthCode(ctx context.Context, a store.AuthCode) error {
	return c.count(c.Store.CreateAuthCode(ctx, a))
}
func (c *countingStore) CreateDeviceCode(ctx context.Context, d store.DeviceCode) error {
	return c.count(c.Store.CreateDeviceCode(ctx, d))
}
func (c *countingStore) ConsumeAuthCode(ctx context.Context, h, id string, exp, now time.Time) (store.AuthCode, error) {
	a, err := c.Store.ConsumeAuthCode(ctx, h, id, exp, now)
	return a, c.count(err)
}
func (c *countingStore) SetAPIKey(ctx context.Context, k store.APIKey) error {
	return c.count(c.Store.SetAPIKey(ctx, k))
}
func (c *countingStore) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return c.count(c.Store.RevokeToken(ctx, jti, exp))
}

// Every endpoint meets malformed, oversized, mistyped and junk input with a
// 4xx: an RFC 6749-shaped JSON error on API endpoints, an HTML page on
// browser endpoints; never a 5xx, and nothing is stored.
func TestBadInputEveryEndpoint(t *testing.T) {
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	c := register(t, env)
	b := env.Browser("mallory")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", 1<<20+10)
	junk := "\x00\xff\xfe" + strings.Repeat("\u202e", 50)
	const form, js = "application/x-www-form-urlencoded", "application/json"

	type tc struct {
		name, method, path, ctype, body string
		browser                         bool // HTML answer expected
	}
	var cases []tc
	api := []struct{ path, ctype string }{
		{"/oauth/register", js}, {"/oauth/token", form},
		{"/api/oauth/device/code", js}, {"/api/oauth/device/token", js},
	}
	for _, ep := range api {
		for _, in := range []struct{ name, ctype, body string }{
			{"malformed JSON", js, `{"client_id": `},
			{"JSON array", js, `["a","b"]`},
			{"JSON with trailing data", js, `{} {}`},
			{"wrong types", js, `{"client_id": 7, "redirect_uris": "x", "grant_type": []}`},
			{"text/plain", "text/plain", "client_id=x"},
			{"no content type", "", "client_id=x"},
			{"oversized", ep.ctype, big},
			{"empty", ep.ctype, ""},
			{"repeated form params", form, "client_id=a&client_id=b&grant_type=x&grant_type=y"},
			{"NUL and invalid UTF-8", ep.ctype, junk},
			{"unknown client", form, "client_id=nobody&grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x"},
			{"huge value", form, "client_id=" + strings.Repeat("z", 100000)},
		} {
			cases = append(cases, tc{name: ep.path + " " + in.name, method: "POST", path: ep.path, ctype: in.ctype, body: in.body})
		}
	}
	for _, q := range []string{
		"", "client_id=nobody", "client_id=" + c.ID + "&redirect_uri=http://evil.example/cb",
		"client_id=" + c.ID + "&client_id=" + c.ID, "client_id=%00%ff", "client_id=" + strings.Repeat("x", 5000),
	} {
		cases = append(cases, tc{name: "/oauth/authorize ?" + truncate(q, 40), method: "GET", path: "/oauth/authorize?" + q, browser: true})
	}
	for _, p := range []string{"/oauth/authorize", "/auth/device", "/settings", "/auth/logout"} {
		for _, in := range []struct{ name, ctype, body string }{
			{"no CSRF", form, "action=approve&user_code=BCDF-1234"},
			{"JSON", js, `{"action":"approve"}`},
			{"oversized", form, big},
			{"junk", form, junk},
		} {
			cases = append(cases, tc{name: p + " " + in.name, method: "POST", path: p, ctype: in.ctype, body: in.body, browser: true})
		}
	}

	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			req, _ := http.NewRequest(tt.method, env.URL+tt.path, strings.NewReader(tt.body))
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			client := http.DefaultClient
			if tt.browser {
				client = b.Client // signed in: the page itself must refuse
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error string `json:"error"`
			}
			raw := make([]byte, 64<<10)
			n, _ := resp.Body.Read(raw)
			raw = raw[:n]
			switch {
			case resp.StatusCode >= 500:
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			case resp.StatusCode < 400 && !(tt.browser && resp.StatusCode == http.StatusFound):
				t.Fatalf("status %d accepted bad input: %s", resp.StatusCode, raw)
			}
			if tt.browser {
				if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusFound && !strings.HasPrefix(ct, "text/html") {
					t.Fatalf("browser endpoint answered %q, want an HTML page", ct)
				}
				if loc := resp.Header.Get("Location"); strings.Contains(loc, "evil.example") {
					t.Fatalf("redirected to an unregistered URI: %s", loc)
				}
			} else if json.Unmarshal(raw, &body) != nil || body.Error == "" {
				t.Fatalf("status %d without an RFC 6749 error body: %s", resp.StatusCode, raw)
			}
			if got := cs.writes.Load(); got != before {
				t.Fatalf("a rejected request stored %d records", got-before)
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
