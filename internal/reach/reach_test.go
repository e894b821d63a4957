package reach

import (
	"fmt"
	"net/http"
	"testing"
)

func TestProxyNeverForLoopback(t *testing.T) {
	env := map[string]string{"HTTPS_PROXY": "http://proxy.test:3128", "http_proxy": "http://proxy.test:3129", "NO_PROXY": "internal.test"}
	proxy := Proxy(func(k string) string { return env[k] })
	for _, tt := range []struct{ url, want string }{
		{"https://mcp.example.com/mcp", "http://proxy.test:3128"},
		{"http://mcp.example.com/mcp", "http://proxy.test:3129"},
		{"https://api.internal.test/mcp", ""},
		{"http://127.0.0.1:8080/api/ping", ""},
		{"http://[::1]:8080/mcp", ""},
		{"http://localhost:8080/mcp", ""},
		{"http://127.0.0.2:8080/mcp", ""},
	} {
		req, _ := http.NewRequest("GET", tt.url, nil)
		got, err := proxy(req)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got); (got == nil && tt.want != "") || (got != nil && s != tt.want) {
			t.Errorf("proxy for %s = %v, want %q", tt.url, got, tt.want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for raw, want := range map[string]string{
		"https://mcp.example.com/mcp": "mcp.example.com:443",
		"http://mcp.example.com/mcp":  "mcp.example.com:80",
		"http://127.0.0.1:8080/mcp":   "127.0.0.1:8080",
		"not a url":                   "not a url",
	} {
		if got := HostPort(raw); got != want {
			t.Errorf("HostPort(%q) = %q, want %q", raw, got, want)
		}
	}
}
