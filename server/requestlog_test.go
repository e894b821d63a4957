package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Through a real server: a plain path is logged by the fast path and an odd
// one by slog, and both lines carry the same fields.
func TestServerWritesRequestLines(t *testing.T) {
	var out lockedBuffer
	h, _ := server.NewLogHandler(&out, "json", slog.LevelInfo)
	srv, err := server.New(context.Background(), server.Config{
		BaseURL: "http://127.0.0.1:1", Store: memory.New(), SigningKey: []byte("test-signing-key-0123456789abcdefghijklmn"),
		Logger: slog.New(h),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, path := range []string{"/api/ping", "/no%20such%20page"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var got []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if m["msg"] == "request" {
			got = append(got, m)
		}
	}
	if len(got) != 2 {
		t.Fatalf("want 2 request lines, got %d: %s", len(got), out.String())
	}
	for i, want := range []struct {
		path   string
		status float64
	}{{"/api/ping", 401}, {"/no such page", 404}} {
		m := got[i]
		if m["path"] != want.path || m["status"] != want.status || m["method"] != "GET" || m["level"] != "INFO" ||
			len(m["request_id"].(string)) != 16 || m["duration"].(float64) <= 0 {
			t.Errorf("line %d: %v", i, m)
		}
	}
}
