package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// What a bearer request costs around the credential check: the whole
// handler (request id, body limit, recovery, the info-level request log line
// `mcpauth serve` writes, routing, headers, JSON) against a bare handler
// writing the same response, both through the same recorder:
//
//	go test -run '^$' -bench 'Ping(Bare|Logged)' -benchmem ./server/

func loggedServer(b *testing.B) *server.Server { return pingServer(b, nil) }

func pingServer(b *testing.B, m *server.Metrics) *server.Server {
	logs, err := server.NewLogHandler(io.Discard, "text", slog.LevelInfo) // as mcpauth serve logs
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{
		BaseURL: "http://127.0.0.1:1", Store: memory.New(), SigningKey: []byte("bench-signing-key-0123456789abcdefghijkl"),
		Limits: server.Limits{Disabled: true}, CacheCredentials: true, Metrics: m,
		Logger: slog.New(logs),
	})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func benchPing(b *testing.B, h http.Handler, auth string) {
	req := httptest.NewRequest("GET", "/api/ping", nil)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("ping: HTTP %d", rec.Code)
		}
	}
}

// The baseline of tools/bench, in a recorder.
func BenchmarkPingBare(b *testing.B) {
	body := []byte(`{"status":"ok","user_id":"u_baseline00000000"}` + "\n")
	benchPing(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		h.Set("X-Request-Id", "0000000000000000")
		_, _ = w.Write(body)
	}), "")
}

func BenchmarkPingLoggedJWT(b *testing.B) {
	srv := loggedServer(b)
	tok, err := srv.IssueTokenForTest("u_bench")
	if err != nil {
		b.Fatal(err)
	}
	benchPing(b, srv.Handler(), tok)
}

// What metrics add to a ping: one counter and one histogram observation.
func BenchmarkPingLoggedJWTMetrics(b *testing.B) {
	srv := pingServer(b, server.NewMetrics())
	tok, err := srv.IssueTokenForTest("u_bench")
	if err != nil {
		b.Fatal(err)
	}
	benchPing(b, srv.Handler(), tok)
}

func BenchmarkPingLoggedAPIKey(b *testing.B) {
	srv := loggedServer(b)
	key, err := srv.APIKeyForTest("u_bench")
	if err != nil {
		b.Fatal(err)
	}
	benchPing(b, srv.Handler(), key)
}
