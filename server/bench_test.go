package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// Micro-benchmarks of the hot paths through the real handler, without a
// network in between: go test -bench . -run '^$' ./server/

func benchServer(b *testing.B, st store.Store, cache bool) http.Handler {
	srv, err := server.New(context.Background(), server.Config{
		BaseURL: "http://127.0.0.1:1", Store: st, SigningKey: []byte("bench-signing-key-0123456789abcdefghijkl"),
		Limits: server.Limits{Disabled: true}, CacheCredentials: cache,
	})
	if err != nil {
		b.Fatal(err)
	}
	return srv.Handler()
}

func sqliteStore(b *testing.B) store.Store {
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func postgresStore(b *testing.B) store.Store {
	st, err := sqlstore.Open(context.Background(), pgtest.FreshDB(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func serve(h http.Handler, req *http.Request) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func BenchmarkDeviceCodeRequestSQLite(b *testing.B) {
	h := benchServer(b, sqliteStore(b), true)
	id := benchClient(b, h)
	body := `{"client_id":"` + id + `"}`
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/oauth/device/code", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if serve(h, req) != 200 {
			b.Fatal("device code failed")
		}
	}
}

func BenchmarkDevicePollSQLite(b *testing.B) {
	h := benchServer(b, sqliteStore(b), true)
	id := benchClient(b, h)
	req := httptest.NewRequest("POST", "/api/oauth/device/code", strings.NewReader(`{"client_id":"`+id+`"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	dc := rec.Body.String()
	dc = dc[strings.Index(dc, `"device_code":"`)+15:]
	dc = dc[:strings.Index(dc, `"`)]
	body := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {dc}, "client_id": {id}}.Encode()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/oauth/device/token", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if serve(h, req) != 400 {
			b.Fatal("poll did not answer pending/slow_down")
		}
	}
}

func BenchmarkPKCEVerify(b *testing.B) {
	v, _ := pkce.NewVerifier()
	c := pkce.S256(v)
	for b.Loop() {
		if !pkce.Verify(v, c) {
			b.Fatal("verify failed")
		}
	}
}

func BenchmarkBadPingMemory(b *testing.B) {
	h := benchServer(b, memory.New(), false)
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/ping", nil)
		req.Header.Set("Authorization", "Bearer mcpa_0000000000000000000000000000000000000000000")
		if serve(h, req) != 401 {
			b.Fatal("want 401")
		}
	}
}

func benchClient(b *testing.B, h http.Handler) string {
	req := httptest.NewRequest("POST", "/oauth/register", strings.NewReader(`{"client_name":"bench","grant_types":["urn:ietf:params:oauth:grant-type:device_code"]}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	s := rec.Body.String()
	s = s[strings.Index(s, `"client_id":"`)+13:]
	return s[:strings.Index(s, `"`)]
}

func BenchmarkPingCachedJWT(b *testing.B) {
	srv, err := server.New(context.Background(), server.Config{
		BaseURL: "http://127.0.0.1:1", Store: memory.New(), SigningKey: []byte("bench-signing-key-0123456789abcdefghijkl"),
		CacheCredentials: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := srv.IssueTokenForTest("u_bench")
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/ping", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if serve(h, req) != 200 {
			b.Fatal("ping failed")
		}
	}
}
