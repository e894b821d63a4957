package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Through a real server: a plain path is logged by the fast path and an odd
// one by slog, and both lines carry the same fields.
func TestServerWritesRequestLines(t *testing.T) {
	var out syncbuf.Buffer
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

// A code exchange through a real server logs "access token issued" with
// the grant, the user, the client and the request id of the token
// request's own line, in both formats.
func TestServerLogsIssuedTokens(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var out syncbuf.Buffer
			h, _ := server.NewLogHandler(&out, format, slog.LevelInfo)
			env := servertest.New(t, servertest.Options{Logger: slog.New(h)})
			c := register(t, env)
			b := env.Browser("mona")
			tok := c.token(b)
			user := userID(t, env, tok)
			var issued, tokenLine string
			for line := range strings.Lines(out.String()) {
				switch {
				case strings.Contains(line, "access token issued"):
					issued = line
				case strings.Contains(line, "/oauth/token"):
					tokenLine = line
				}
			}
			id := regexp.MustCompile(`request_id"?[=:]"?([0-9a-f]{16})`).FindStringSubmatch(tokenLine)
			if id == nil {
				t.Fatalf("no request line for /oauth/token in:\n%s", out.String())
			}
			var want []string
			if format == "json" {
				want = []string{`"msg":"access token issued"`, `"request_id":"` + id[1] + `"`, `"grant":"authorization_code"`, `"user_id":"` + user + `"`, `"client_id":"` + c.ID + `"`}
			} else {
				want = []string{`msg="access token issued"`, "request_id=" + id[1], "grant=authorization_code", "user_id=" + user, "client_id=" + c.ID}
			}
			for _, w := range want {
				if !strings.Contains(issued, w) {
					t.Errorf("issued line %q lacks %s", issued, w)
				}
			}
		})
	}
}
