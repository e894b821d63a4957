package host_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// Where each host keeps its user-level entries, per OS, relative to the
// home folder (from each host's documentation).
var hostFiles = map[string]map[string]string{
	"claude-code":    {"linux": ".claude.json", "darwin": ".claude.json", "windows": `\.claude.json`},
	"codex":          {"linux": ".codex/config.toml", "darwin": ".codex/config.toml", "windows": `\.codex\config.toml`},
	"gemini":         {"linux": ".gemini/settings.json", "darwin": ".gemini/settings.json", "windows": `\.gemini\settings.json`},
	"opencode":       {"linux": ".config/opencode/opencode.json", "darwin": ".config/opencode/opencode.json", "windows": `\.config\opencode\opencode.json`},
	"claude-desktop": {"linux": ".config/Claude/claude_desktop_config.json", "darwin": "Library/Application Support/Claude/claude_desktop_config.json", "windows": `\AppData\Roaming\Claude\claude_desktop_config.json`},
	"cursor":         {"linux": ".cursor/mcp.json", "darwin": ".cursor/mcp.json", "windows": `\.cursor\mcp.json`},
	"vscode":         {"linux": ".config/Code/User/mcp.json", "darwin": "Library/Application Support/Code/User/mcp.json", "windows": `\AppData\Roaming\Code\User\mcp.json`},
	"windsurf":       {"linux": ".codeium/windsurf/mcp_config.json", "darwin": ".codeium/windsurf/mcp_config.json", "windows": `\.codeium\windsurf\mcp_config.json`},
}

// The entry each host documents, as read back from the written file:
// where the entries live and the entry's fields.
var documented = map[string]struct {
	key   string
	entry func(args []any) map[string]any
}{
	"claude-code": {"mcpServers", func(a []any) map[string]any {
		return map[string]any{"type": "stdio", "command": bin, "args": a, "env": map[string]any{}}
	}},
	"codex":  {"mcp_servers", plain},
	"gemini": {"mcpServers", plain},
	"opencode": {"mcp", func(a []any) map[string]any {
		return map[string]any{"type": "local", "command": append([]any{bin}, a...), "enabled": true}
	}},
	"claude-desktop": {"mcpServers", plain},
	"cursor":         {"mcpServers", plain},
	"vscode":         {"servers", func(a []any) map[string]any { return map[string]any{"type": "stdio", "command": bin, "args": a} }},
	"windsurf":       {"mcpServers", plain},
}

func plain(a []any) map[string]any { return map[string]any{"command": bin, "args": a} }

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// decode reads a host's file as data.
func decode(t *testing.T, hostName, content string) map[string]any {
	t.Helper()
	doc := map[string]any{}
	var err error
	if hostName == "codex" {
		err = toml.Unmarshal([]byte(content), &doc)
	} else {
		err = json.Unmarshal([]byte(content), &doc)
	}
	if err != nil {
		t.Fatalf("%s: the file does not parse: %v\n%s", hostName, err, content)
	}
	return doc
}

// Every host gets its documented file, holding the documented entry, in
// the documented place.
func TestAddWritesEachHostsFile(t *testing.T) {
	for hostName, want := range documented {
		t.Run(hostName, func(t *testing.T) {
			m := newMachine(t, "linux")
			if err, _, stderr := m.run("add", hostName, server); err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			content := m.read(hostFiles[hostName]["linux"])
			m.golden("new-"+hostName+".golden", content)
			args := anys([]string{"proxy", server, "--login", "--config-dir", m.config})
			doc := decode(t, hostName, content)
			entries, _ := doc[want.key].(map[string]any)
			w := want.entry(args)
			if got := entries["example"]; !reflect.DeepEqual(got, w) {
				t.Errorf("%s.example = %v, want %v", want.key, got, w)
			}
		})
	}
}

// The file's place per OS, from an injected home folder.
func TestHostFilesPerOS(t *testing.T) {
	for hostName, byOS := range hostFiles {
		for goos, rel := range byOS {
			m := newMachine(t, goos)
			m.vars["MCPAUTH_CONFIG_DIR"] = m.config
			_, _, stderr := m.run("add", hostName, server, "--print")
			want := filepath.Join(m.home, rel)
			if goos == "windows" {
				want = m.home + rel
			}
			if !strings.Contains(stderr, "# in "+want+"\n") {
				t.Errorf("%s on %s: %q, want the file %s", hostName, goos, stderr, want)
			}
		}
	}
}

// $XDG_CONFIG_HOME moves opencode's file on every OS and the Electron
// hosts' on Linux, as those hosts read it (the interop lab found opencode
// reading nothing written to ~/.config with it set).
func TestXDGConfigHomeIsWhereThoseHostsRead(t *testing.T) {
	for _, tc := range []struct{ host, goos, rel string }{
		{"opencode", "linux", "opencode/opencode.json"},
		{"opencode", "darwin", "opencode/opencode.json"},
		{"vscode", "linux", "Code/User/mcp.json"},
		{"claude-desktop", "linux", "Claude/claude_desktop_config.json"},
	} {
		m := newMachine(t, tc.goos)
		m.xdg = filepath.Join(t.TempDir(), "xdg")
		_, _, stderr := m.run("add", tc.host, server, "--print")
		if want := filepath.Join(m.xdg, tc.rel); !strings.Contains(stderr, "# in "+want+"\n") {
			t.Errorf("%s on %s with XDG_CONFIG_HOME: %q, want the file %s", tc.host, tc.goos, stderr, want)
		}
	}
	m := newMachine(t, "darwin") // VS Code on macOS keeps Application Support
	m.xdg = filepath.Join(t.TempDir(), "xdg")
	if _, _, stderr := m.run("add", "vscode", server, "--print"); !strings.Contains(stderr, "Application Support") {
		t.Errorf("vscode on darwin with XDG_CONFIG_HOME: %q", stderr)
	}
}

// Files with other entries, other settings and comments keep them all:
// JSONC stays JSONC (opencode, VS Code), strict JSON stays strict (Claude
// Code), and Codex's TOML keeps its comments and tables.
func TestAddKeepsTheRestOfTheFile(t *testing.T) {
	for _, tc := range []struct{ host, fixture string }{
		{"opencode", "opencode.jsonc"}, {"vscode", "vscode-mcp.jsonc"}, {"claude-code", "claude.json"}, {"codex", "codex-config.toml"}, {"gemini", "gemini-empty-servers.json"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			m := newMachine(t, "linux")
			orig, err := os.ReadFile(filepath.Join("testdata", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			rel := hostFiles[tc.host]["linux"]
			if tc.host == "opencode" {
				rel = ".config/opencode/opencode.jsonc" // the user's JSONC file is the one edited
			}
			m.write(rel, string(orig))
			if err, _, stderr := m.run("add", tc.host, server); err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			got := m.read(rel)
			m.golden("existing-"+tc.host+".golden", got)
			for _, line := range strings.Split(string(orig), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "//") || strings.HasPrefix(l, "#") {
					if !strings.Contains(got, l) {
						t.Errorf("comment %q lost", l)
					}
				}
			}
			if json.Valid(orig) && tc.host != "codex" && !json.Valid([]byte(got)) {
				t.Errorf("a strict JSON file is no longer strict JSON:\n%s", got)
			}
			if backup := m.read(rel + ".mcpauth-backup"); backup != string(orig) {
				t.Errorf("backup differs from the original")
			}
			// Removing the entry gives the file back as it was.
			if err, _, stderr := m.run("remove", tc.host, "example"); err != nil {
				t.Fatalf("remove: %v: %s", err, stderr)
			}
			if after := m.read(rel); after != string(orig) {
				t.Errorf("add then remove changed the file:\n--- after\n%s\n--- before\n%s", after, orig)
			}
		})
	}
}

// Another entry of the same name is replaced only with --force, and the
// file is left alone otherwise; adding the same entry again changes nothing.
func TestAddNeverOverwritesWithoutForce(t *testing.T) {
	m := newMachine(t, "linux")
	orig := `{"mcpServers": {"example": {"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.example.com/mcp"]}}}` + "\n"
	m.write(".cursor/mcp.json", orig)
	err, _, _ := m.run("add", "cursor", server)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err %v, want a refusal naming --force", err)
	}
	if m.read(".cursor/mcp.json") != orig {
		t.Fatal("the refused add changed the file")
	}
	if _, err := os.Stat(filepath.Join(m.home, ".cursor/mcp.json.mcpauth-backup")); err == nil {
		t.Error("a refused add left a backup")
	}
	if err, _, stderr := m.run("add", "cursor", server, "--force"); err != nil {
		t.Fatalf("--force: %v %s", err, stderr)
	}
	if !strings.Contains(m.read(".cursor/mcp.json"), bin) || m.read(".cursor/mcp.json.mcpauth-backup") != orig {
		t.Fatal("--force did not replace the entry, keeping the old file")
	}
	written := m.read(".cursor/mcp.json")
	m.json = true
	err, stdout, _ := m.run("add", "cursor", server)
	if err != nil || !strings.Contains(stdout, `"unchanged": true`) || m.read(".cursor/mcp.json") != written {
		t.Fatalf("adding the same entry again: %v %s", err, stdout)
	}
	if err, _, _ := m.run("add", "cursor", server, "--name", "bad name"); err == nil {
		t.Error("a name with a space was accepted")
	}
}

// --print writes nothing; the storage choice, account and folder given to
// add are carried as flags.
func TestPrintCarriesTheFlags(t *testing.T) {
	m := newMachine(t, "linux")
	m.vars["MCPAUTH_STORAGE"], m.vars["MCPAUTH_ACCOUNT"] = "file", "work"
	err, stdout, _ := m.run("add", "codex", server, "--print", "--name", "example-work")
	if err != nil {
		t.Fatal(err)
	}
	want := `[mcp_servers.example-work]
command = "` + bin + `"
args = ["proxy", "` + server + `", "--login", "--config-dir", "` + m.config + `", "--storage", "file", "--account", "work"]
`
	if stdout != want {
		t.Fatalf("printed\n%s\nwant\n%s", stdout, want)
	}
	if entries, _ := os.ReadDir(m.home); len(entries) != 0 {
		t.Fatalf("--print wrote %v", entries)
	}
}

// list shows the entries that run mcpauth proxy, and only those; remove
// refuses another program's entry without --force.
func TestListAndRemove(t *testing.T) {
	m := newMachine(t, "darwin")
	m.write(".gemini/settings.json", `{"mcpServers": {"other": {"command": "npx", "args": ["server"]}, "remote": {"httpUrl": "https://x.example/mcp"}}}`)
	for _, h := range []string{"gemini", "claude-desktop"} {
		if err, _, stderr := m.run("add", h, server); err != nil {
			t.Fatalf("%v %s", err, stderr)
		}
	}
	m.json = true
	err, stdout, _ := m.run("list")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Host, Name, Server, File string }
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, r := range rows {
		if r.Name != "example" || r.Server != server {
			t.Errorf("listed %+v", r)
		}
		hosts = append(hosts, r.Host)
	}
	if !slices.Equal(hosts, []string{"gemini", "claude-desktop"}) {
		t.Errorf("listed hosts %v", hosts)
	}
	if err, _, _ := m.run("remove", "gemini", "other"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("removing another program's entry: %v", err)
	}
	if err, _, _ := m.run("remove", "gemini", "missing"); err == nil {
		t.Error("removing a missing entry succeeded")
	}
	if err, _, _ := m.run("remove", "gemini", "example"); err != nil {
		t.Fatal(err)
	}
	if got := m.read(".gemini/settings.json"); strings.Contains(got, `"example"`) || !strings.Contains(got, `"other"`) || !strings.Contains(got, `"remote"`) {
		t.Errorf("after remove:\n%s", got)
	}
}

// An entry Codex's file defines in a form the textual edit does not
// handle is refused, not mangled.
func TestCodexInlineEntryIsRefused(t *testing.T) {
	m := newMachine(t, "linux")
	orig := "[mcp_servers]\nexample = { command = \"npx\", args = [\"x\"] }\n"
	m.write(".codex/config.toml", orig)
	err, _, _ := m.run("add", "codex", server, "--force")
	if err == nil || !strings.Contains(err.Error(), "by hand") || m.read(".codex/config.toml") != orig {
		t.Fatalf("err %v, file:\n%s", err, m.read(".codex/config.toml"))
	}
}
