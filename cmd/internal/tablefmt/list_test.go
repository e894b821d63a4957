package tablefmt_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
)

// PathURL gives way in the host, keeping the path that tells probes apart.
func TestPathURL(t *testing.T) {
	const long = "https://mcp-gateway.eu-west-1.example-corporation.com/.well-known/oauth-protected-resource/tenants/acme/mcp"
	for _, tt := range []struct {
		w    int
		want string
	}{
		{200, long},
		{80, "https://mcp-gatew…tion.com/.well-known/oauth-protected-resource/tenants/acme/mcp"},
		{40, tablefmt.MiddleURL(long, 40)}, // no room for a host beside the path
	} {
		got := tablefmt.PathURL(long, tt.w)
		if got != tt.want || lipgloss.Width(got) > tt.w {
			t.Errorf("PathURL(%d) = %q (%d wide), want %q", tt.w, got, lipgloss.Width(got), tt.want)
		}
	}
}

// A List keeps each key whole on its own line and flows the fields under
// it: together on one line when they fit, moved down when not, and a
// field wider than a line wrapped.
func TestList(t *testing.T) {
	entries := []tablefmt.Entry{
		{Key: "http://127.0.0.1:18080/some/long/path/mcp", Fields: []string{"account default", "user mona (u_1)", "oauth", "expires in 23h"}},
		{Key: "https://a.example/mcp", Fields: []string{"-", "network error: dial tcp 127.0.0.1:18080: connect: connection refused"}},
	}
	got := tablefmt.List(entries, 40, nil)
	want := `http://127.0.0.1:18080/some/long/path/mcp
  account default  user mona (u_1)
  oauth  expires in 23h
https://a.example/mcp
  -
  network error: dial tcp
  127.0.0.1:18080: connect: connection
  refused`
	if got != want {
		t.Errorf("List at 40:\n%s\nwant:\n%s", got, want)
	}
	if got := tablefmt.List(entries, 0, nil); strings.Count(got, "\n") != 3 {
		t.Errorf("List unlimited: want one line of fields each:\n%s", got)
	}
	if got := tablefmt.List(entries[:1], 36, tablefmt.PathURL); !strings.HasPrefix(got, "http://127.0…8080/some/long/path/mcp\n") {
		t.Errorf("List with PathURL keys:\n%s", got)
	}
}

// Pairs keep a value beside its label when it fits, else under it: a URL
// whole, text wrapped.
func TestPairs(t *testing.T) {
	rows := [][2]string{
		{"resource", "https://mcp.example.com/mcp"},
		{"authorization_endpoint", "https://login.example-corporation.com/oauth2/v1/authorize"},
		{"scopes_supported", "mcp offline_access openid profile email"},
	}
	got := tablefmt.Pairs(rows, 64)
	want := `resource                https://mcp.example.com/mcp
authorization_endpoint
  https://login.example-corporation.com/oauth2/v1/authorize
scopes_supported        mcp offline_access openid profile email`
	if got != want {
		t.Errorf("Pairs at 64:\n%s\nwant:\n%s", got, want)
	}
	if got := tablefmt.Pairs(rows, 40); !strings.Contains(got, "scopes_supported\n  mcp offline_access openid profile\n  email") {
		t.Errorf("Pairs at 40: the scopes wrap under their label:\n%s", got)
	}
}
