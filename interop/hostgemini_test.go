package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Gemini CLI: `gemini mcp list` connects to each server, in a folder the
// user trusts (~/.gemini/trustedFolders.json: in any other it starts no
// server). Telemetry off; no relaunch of itself with more memory.
func labGeminiCLI(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/gemini-cli", "@google/gemini-cli", "Gemini CLI")
	h := newHostEnv(t, bin, "GEMINI_TELEMETRY_ENABLED=false", "GEMINI_CLI_NO_RELAUNCH=true")
	script := filepath.Join(dir, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
	gemini := func(t *testing.T, args ...string) string {
		return h.must(t, "node", append([]string{script}, args...)...)
	}
	r := g.row("Gemini CLI", version)
	list := func(t *testing.T) {
		out := gemini(t, "mcp", "list")
		if !geminiStatus(h.entry, "Connected").MatchString(out) {
			t.Fatalf("gemini mcp list does not show %s connected:\n%s", h.entry, out)
		}
	}
	g.flow(t, r, "host add", func(t *testing.T) outcome {
		h.hostAdd("gemini")
		trust, _ := json.Marshal(map[string]string{h.work: "TRUST_FOLDER"})
		if err := os.WriteFile(filepath.Join(h.home, ".gemini", "trustedFolders.json"), trust, 0o600); err != nil {
			t.Fatal(err)
		}
		h.checkEntry(t, gemini(t, "mcp", "list"))
		return pass("`~/.gemini/settings.json`: `gemini mcp list` shows the command line host add wrote, in a trusted folder (in any other it lists the server as disabled and starts nothing)")
	})
	h.connectFlows(g, r, "ping", list,
		"`gemini mcp list` shows it Connected (with no tools); its health check is `initialize` and `ping`, which the server answered with the stored token")
	g.flow(t, r, "helper", func(t *testing.T) outcome {
		return na("no header helper: an entry's `headers` are fixed strings")
	})
	g.flow(t, r, "own OAuth", func(t *testing.T) outcome {
		gemini(t, "mcp", "add", "--scope", "user", "--transport", "http", "own", h.mcpURL)
		if out := gemini(t, "mcp", "list"); !geminiStatus("own", "Disconnected").MatchString(out) {
			t.Fatalf("gemini mcp list shows the http entry without a login otherwise than Disconnected (if it logs in now, make this cell a pass):\n%s", out)
		}
		h.noBrowser(t)
		return na("it signs in only inside its interactive session (`/mcp auth`): `gemini mcp list` shows an `http` entry without a login Disconnected and starts no OAuth")
	})
}

// geminiStatus matches gemini mcp list's line for the server called name
// with status ("✓ name: command … (stdio) - Connected").
func geminiStatus(name, status string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\S+ ` + regexp.QuoteMeta(name) + `: .* - ` + status + `$`)
}
