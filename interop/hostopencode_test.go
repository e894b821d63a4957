package interop

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// opencode: `opencode mcp list` connects to each server. Updates, the
// model list, default plugins, LSP downloads and sharing off: nothing it
// would fetch.
func labOpencode(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/opencode", "opencode-ai", "opencode")
	h := newHostEnv(t, bin, "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
	opencode := filepath.Join(dir, "node_modules", "opencode-ai", "bin", "opencode.exe")
	r := g.row("opencode", version)
	list := func(t *testing.T) {
		out := h.must(t, opencode, "mcp", "list")
		if !opencodeStatus(h.entry, "connected").MatchString(out) {
			t.Fatalf("opencode mcp list does not show %s connected:\n%s", h.entry, out)
		}
	}
	g.flow(t, r, "host add", func(t *testing.T) outcome {
		h.hostAdd("opencode")
		h.checkEntry(t, h.must(t, opencode, "mcp", "list"))
		return pass("`~/.config/opencode/opencode.json`: `opencode mcp list` shows the command line host add wrote")
	})
	h.connectFlows(g, r, "tools/list", list,
		"`opencode mcp list` shows it connected (with no tools); the server answered `tools/list` with the stored token")
	g.flow(t, r, "helper", func(t *testing.T) outcome {
		return na("no header helper: a remote entry's `headers` are fixed strings (or `{env:…}`, `{file:…}`)")
	})
	g.flow(t, r, "own OAuth", func(t *testing.T) outcome {
		// A remote entry beside host add's, given inline as opencode allows.
		own, _ := json.Marshal(map[string]any{"mcp": map[string]any{"own": map[string]any{"type": "remote", "url": h.mcpURL, "enabled": true}}})
		h.env = append(h.env, "OPENCODE_CONFIG_CONTENT="+string(own))
		log := filepath.Join(t.TempDir(), "browser.log")
		if out, err := h.run(t, log, opencode, "mcp", "auth", "own"); err != nil || !strings.Contains(out, "Authentication successful") {
			t.Fatalf("opencode mcp auth: %v\n%s", err, out)
		}
		h.srv.served(t, "tools/list", func() {
			if out := h.must(t, opencode, "mcp", "list"); !opencodeStatus("own", "connected").MatchString(out) {
				t.Fatalf("opencode mcp list does not show its own login connected:\n%s", out)
			}
		})
		return pass("`opencode mcp auth` registers (RFC 7591) and logs in without a terminal: it opens `$BROWSER` and takes the code on its fixed loopback callback, `http://127.0.0.1:19876/mcp/oauth/callback`; `opencode mcp list` then shows the remote entry connected")
	})
}

// opencodeStatus matches opencode mcp list's line for the server called
// name with status ("●  ✓ name connected").
func opencodeStatus(name, status string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)\s` + regexp.QuoteMeta(name) + `\s+(?:\x1b\[[0-9;]*m)?` + status + `\b`)
}
