package flows

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A URL that is not an MCP endpoint: the first probe says what it answered.
func TestDiscoverDescribesWhatAnswered(t *testing.T) {
	for _, tt := range []struct {
		name, ct, body, want string
		status               int
	}{
		{"html page", "text/html; charset=utf-8", "<!doctype html><title>Acme</title>", "an HTML page", 200},
		{"html without type", "", "<html><body>hi</body></html>", "an HTML page", 200},
		{"json api", "application/json", `{"status":"ok"}`, "JSON that is not MCP", 200},
		{"mcp without auth", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, "an MCP response without asking for authorization", 200},
		{"not found", "text/plain; charset=utf-8", "404 page not found", "a text/plain body", 404},
		{"empty", "", "", "an empty body", 204},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/mcp" {
					http.NotFound(w, r)
					return
				}
				if tt.ct != "" {
					w.Header().Set("Content-Type", tt.ct)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			d, err := Discover(context.Background(), DiscoverConfig{HTTPClient: srv.Client()}, srv.URL+"/mcp")
			if !errors.Is(err, ErrNoMetadata) {
				t.Fatalf("err %v, want ErrNoMetadata", err)
			}
			if p := d.Probes[0]; p.Status != tt.status || p.Answer != tt.want {
				t.Fatalf("probe %+v, want status %d answer %q", p, tt.status, tt.want)
			}
		})
	}
}
