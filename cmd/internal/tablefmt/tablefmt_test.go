package tablefmt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
)

func TestMiddleURL(t *testing.T) {
	const long = "https://mcp.example.com/.well-known/oauth-protected-resource/tenants/acme/mcp"
	for _, tt := range []struct {
		in   string
		w    int
		want string
	}{
		{long, 200, long},
		{long, 50, "https://mcp.example.com…-resource/tenants/acme/mcp"},
		{long, 30, "https://mcp.exa…nants/acme/mcp"},
		{"not a url at all, just long", 11, "not a… long"},
		{"abc", 1, "a"},
	} {
		got := tablefmt.MiddleURL(tt.in, tt.w)
		if got != tt.want || lipgloss.Width(got) > tt.w {
			t.Errorf("MiddleURL(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
}

func sample() tablefmt.Table {
	return tablefmt.Table{
		Columns: []tablefmt.Column{tablefmt.Col("PROBE", tablefmt.URL), tablefmt.Col("STATUS", tablefmt.Fixed), tablefmt.Col("VERDICT", tablefmt.Text)},
		Rows: [][]string{
			{"https://mcp.example.net/mcp", "401", "Bearer challenge with resource_metadata"},
			{"https://auth.example.com/.well-known/oauth-authorization-server/tenants/acme", "-",
				`network error: Get "https://auth.example.com/.well-known/oauth-authorization-server/tenants/acme": dial tcp: connection refused`},
			{"https://mcp.example.net", "-", "no protected resource metadata found; treating the base URL as the authorization server (MCP 2025-03-26)"},
		},
	}
}

// Renders the same table at 80 and 200 columns: goldens show the layout,
// and no line may be wider than the width.
func TestRenderWidths(t *testing.T) {
	for _, width := range []int{80, 200} {
		name := fmt.Sprintf("probes-%d-plain.txt", width)
		t.Run(name, func(t *testing.T) {
			got := tablefmt.Render(sample(), width) + "\n"
			AssertWidth(t, got, width)
			if strings.Contains(got, "\x1b") {
				t.Errorf("ANSI escape in output:\n%s", got)
			}
			clitest.Golden(t, name, got)
		})
	}
}

// Narrow widths shrink fixed columns too: still no line wider.
func TestRenderNarrow(t *testing.T) {
	for width := 16; width <= 60; width += 11 {
		AssertWidth(t, tablefmt.Render(sample(), width), width)
	}
}

func TestRenderUnlimitedKeepsEverything(t *testing.T) {
	got := tablefmt.Render(sample(), 0)
	for _, r := range sample().Rows {
		if !strings.Contains(got, r[0]) || !strings.Contains(got, r[2]) {
			t.Fatalf("row %q shortened without a width:\n%s", r, got)
		}
	}
}

func TestURLColumnWrapsNotes(t *testing.T) {
	tb := tablefmt.Table{Columns: []tablefmt.Column{tablefmt.Col("", tablefmt.URL)}, Rows: [][]string{{"no protected resource metadata here"}}}
	if got := tablefmt.Render(tb, 20); got != "no protected\nresource metadata\nhere" {
		t.Fatalf("got %q", got)
	}
}

func TestRenderKeyValueHasNoHeader(t *testing.T) {
	got := tablefmt.Render(tablefmt.Table{Columns: []tablefmt.Column{tablefmt.Col("", tablefmt.Fixed), tablefmt.Col("", tablefmt.URL)}, Rows: [][]string{{"issuer", "http://127.0.0.1:1"}}}, 80)
	if got != "issuer  http://127.0.0.1:1" {
		t.Fatalf("got %q", got)
	}
}

// AssertWidth fails when a line of out is wider than width.
func AssertWidth(t *testing.T, out string, width int) {
	t.Helper()
	if w := tablefmt.Widest(out); w > width {
		t.Errorf("a line is %d columns, wider than %d:\n%s", w, width, out)
	}
}
