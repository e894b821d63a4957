package flows_test

import (
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

func TestCanonicalResource(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://H.Example/mcp", "https://h.example/mcp"},
		{"HTTPS://h.example:443/mcp#frag", "https://h.example/mcp"},
		{"http://127.0.0.1:80/", "http://127.0.0.1"},
		{"http://127.0.0.1:8080/mcp/", "http://127.0.0.1:8080/mcp/"},
		{"https://[::1]:8443/x?q=1", "https://[::1]:8443/x?q=1"},
		{"https://h", "https://h"},
	}
	for _, tt := range tests {
		got, err := flows.CanonicalResource(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"/relative", "not a url", "mailto:x@y"} {
		if _, err := flows.CanonicalResource(bad); err == nil {
			t.Errorf("CanonicalResource(%q) accepted", bad)
		}
	}
}
