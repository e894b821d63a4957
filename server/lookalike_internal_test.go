package server

import (
	"testing"

	"github.com/mcpauth/mcpauth/server/store"
)

func TestClaimedIdentity(t *testing.T) {
	for _, tc := range []struct{ name, host, want string }{
		{"mcpauth Official Login", "127.0.0.1:8080", "mcpauth"},
		{"Sign in to 127.0.0.1", "127.0.0.1:8080", "127.0.0.1:8080"},
		{"Example Corp SSO", "mcp.example.com", "mcp.example.com"},
		{"G00gle Login", "127.0.0.1:8080", "Google"},
		{"Gооgle Drive", "127.0.0.1:8080", "Google"}, // Cyrillic о
		{"GitHubApp", "127.0.0.1:8080", "GitHub"},
		{"vs-code extension", "127.0.0.1:8080", "VS Code"},
		{"ChatGPT connector", "127.0.0.1:8080", "ChatGPT"},
		{"Pineapple notes", "127.0.0.1:8080", ""},
		{"Cursory reader", "127.0.0.1:8080", ""},
		{"Weather tool", "mcp.example.com", ""},
		{"", "127.0.0.1:8080", ""},
	} {
		if got := claimedIdentity(tc.name, tc.host); got != tc.want {
			t.Errorf("claimedIdentity(%q, %q) = %q, want %q", tc.name, tc.host, got, tc.want)
		}
	}
}

func TestFirstParty(t *testing.T) {
	loop := []string{"http://127.0.0.1:20001/callback", "http://[::1]:20002/callback"}
	for _, tc := range []struct {
		c    store.Client
		want bool
	}{
		{store.Client{ID: "c1", Name: "mcpauth CLI", RedirectURIs: loop}, true},
		{store.Client{ID: "c2", Name: "mcpauth CLI", RedirectURIs: append(loop, "https://evil.example/cb")}, false},
		{store.Client{ID: "c3", Name: "mcpauth CLI"}, false},
		{store.Client{ID: "c4", Name: "mcpauth cli", RedirectURIs: loop}, false},
		{store.Client{ID: "https://cli.example/meta.json", Name: "mcpauth CLI", RedirectURIs: loop}, false},
	} {
		if got := firstParty(tc.c); got != tc.want {
			t.Errorf("firstParty(%+v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}
