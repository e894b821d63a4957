package interop

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Claude Code: `claude mcp list` and `claude mcp get` health-check each
// server (get also shows its command line); updates and nonessential
// traffic (telemetry, error reports) off.
func labClaudeCode(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/claude-code", "@anthropic-ai/claude-code", "Claude Code")
	h := newHostEnv(t, bin, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	claude := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
	r := g.row("Claude Code", version)
	list := func(t *testing.T) {
		out := h.must(t, claude, "mcp", "list")
		if !claudeConnected(out, h.entry) {
			t.Fatalf("claude mcp list does not show %s connected:\n%s", h.entry, out)
		}
	}
	g.flow(t, r, "host add", func(t *testing.T) outcome {
		h.hostAdd("claude-code")
		out := h.must(t, claude, "mcp", "get", h.entry)
		h.checkEntry(t, out)
		if !strings.Contains(out, "Scope: User config") {
			t.Fatalf("claude mcp get does not show %s in the user scope:\n%s", h.entry, out)
		}
		return pass("`~/.claude.json`, user scope: `claude mcp get` shows the command line host add wrote")
	})
	h.connectFlows(g, r, "tools/list", list,
		"`claude mcp list` shows it ✔ Connected (its health check shows no tools); the server answered `tools/list` with the stored token")
	g.flow(t, r, "helper", func(t *testing.T) outcome {
		entry, _ := json.Marshal(map[string]string{"type": "http", "url": h.mcpURL, "headersHelper": h.helperCommand()})
		h.must(t, claude, "mcp", "add-json", "--scope", "user", "helper", string(entry))
		h.srv.served(t, "tools/list", func() {
			if out := h.must(t, claude, "mcp", "get", "helper"); !claudeConnected(out, "helper") {
				t.Fatalf("claude mcp get does not show the helper's entry connected:\n%s", out)
			}
		})
		return pass("an `http` entry (`claude mcp add-json`) whose `headersHelper` is the `mcpauth token --header -o json` command line itself, with `--config-dir` and `--storage`: no wrapper script, no environment")
	})
	g.flow(t, r, "own OAuth", func(t *testing.T) outcome {
		h.must(t, claude, "mcp", "add", "--transport", "http", "--scope", "user", "own", h.mcpURL)
		out, err := h.run(t, filepath.Join(t.TempDir(), "browser.log"), claude, "mcp", "login", "own")
		if err == nil || !strings.Contains(out, "isn't an interactive terminal") {
			t.Fatalf("claude mcp login without a terminal: %v (want a refusal naming the terminal; if it logs in now, make this cell a pass):\n%s", err, out)
		}
		return na("needs its interactive terminal: `claude mcp login` without one answers \"this isn't an interactive terminal\"")
	})
}

// claudeConnected reports whether claude mcp list ("name: command … - ✔
// Connected") or claude mcp get ("name:", then "Status: ✔ Connected")
// shows the server named entry connected.
func claudeConnected(out, entry string) bool {
	name := regexp.QuoteMeta(entry)
	list := regexp.MustCompile(`(?m)^` + name + `: .* - ✔ Connected$`)
	get := regexp.MustCompile(`(?m)^` + name + `:\n(?:\s+.*\n)*?\s+Status: ✔ Connected$`)
	return list.MatchString(out) || get.MatchString(out)
}
