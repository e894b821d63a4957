// Package hostconfig knows where MCP hosts (Claude Code, Codex, Gemini CLI,
// opencode, Claude Desktop, Cursor, VS Code, Windsurf) keep their stdio
// server entries, and edits those files while keeping everything else in
// them: other entries, other settings, comments.
package hostconfig

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Format is how a host's file is written.
type Format int

const (
	// JSON files are edited as JSON with comments (hujson): a strict JSON
	// file stays strict, a JSONC file keeps its comments.
	JSON Format = iota
	// TOML files (Codex) are edited as text, one table at a time.
	TOML
)

// Host describes one host: its file, where the entries live in it and
// the shape of an entry.
type Host struct {
	Name  string // on the command line
	Title string
	// Key is the top-level member (JSON) or table (TOML) holding entries.
	Key    string
	Format Format
	// paths are the candidate files for a home folder and GOOS, the one
	// used by default first; "" where the host has no such file.
	paths func(loc Location) []string
	// shape is an entry as the host writes it (the one its own `mcp add`
	// command writes, where it has one that runs without a terminal).
	shape func(Entry) any
	// Notes are said after an entry is written.
	Notes []string
	// NewFile is the content of a file created for the first entry.
	NewFile string
}

// Hosts is every supported host, in the order list shows them.
func Hosts() []Host {
	return []Host{
		{Name: "claude-code", Title: "Claude Code", Key: "mcpServers", paths: inHome(".claude.json"),
			shape: func(e Entry) any { return typedEntry{"stdio", e.Command, e.Args, &struct{}{}} },
			Notes: []string{"Claude Code reads ~/.claude.json at start: run /mcp in a new session to see the server"}},
		{Name: "codex", Title: "Codex", Key: "mcp_servers", Format: TOML, paths: inHome(".codex", "config.toml"),
			Notes: []string{"Codex reads the file at start (CODEX_HOME moves it: then pass --file)"}},
		{Name: "gemini", Title: "Gemini CLI", Key: "mcpServers", paths: inHome(".gemini", "settings.json"),
			shape: func(e Entry) any { return plainEntry{e.Command, e.Args} },
			Notes: []string{"Gemini CLI starts no MCP server in a folder it does not trust: trust the folder you start gemini in (/permissions, or accept its prompt)"}},
		{Name: "opencode", Title: "opencode", Key: "mcp", paths: func(loc Location) []string {
			base := loc.xdgConfig() // opencode reads $XDG_CONFIG_HOME/opencode on every OS
			return []string{join(loc.GOOS, base, "opencode", "opencode.json"), join(loc.GOOS, base, "opencode", "opencode.jsonc")}
		}, shape: func(e Entry) any {
			return opencodeEntry{"local", append([]string{e.Command}, e.Args...), true}
		}, NewFile: "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n"},
		{Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers", paths: appConfig("Claude", "claude_desktop_config.json"),
			shape: func(e Entry) any { return plainEntry{e.Command, e.Args} },
			Notes: []string{"quit Claude Desktop completely and start it again: it reads the file at start"}},
		{Name: "cursor", Title: "Cursor", Key: "mcpServers", paths: inHome(".cursor", "mcp.json"),
			shape: func(e Entry) any { return plainEntry{e.Command, e.Args} }},
		{Name: "vscode", Title: "VS Code", Key: "servers", paths: appConfig("Code", "User", "mcp.json"),
			shape: func(e Entry) any { return typedEntry{Type: "stdio", Command: e.Command, Args: e.Args} },
			Notes: []string{"VS Code asks to trust the server when it first starts it (MCP: List Servers shows it)"}},
		{Name: "windsurf", Title: "Windsurf", Key: "mcpServers", paths: inHome(".codeium", "windsurf", "mcp_config.json"),
			shape: func(e Entry) any { return plainEntry{e.Command, e.Args} },
			Notes: []string{"press Refresh in Windsurf's MCP panel (Cascade) to start the server"}},
	}
}

// Lookup finds a host by name.
func Lookup(name string) (Host, error) {
	hosts := Hosts()
	i := slices.IndexFunc(hosts, func(h Host) bool { return h.Name == name })
	if i < 0 {
		return Host{}, fmt.Errorf("unknown host %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return hosts[i], nil
}

// Names are the hosts' names.
func Names() []string {
	var names []string
	for _, h := range Hosts() {
		names = append(names, h.Name)
	}
	return names
}

// Location is where a user's config files are: the home folder,
// $XDG_CONFIG_HOME ("" when unset) and the OS.
type Location struct {
	Home, XDGConfigHome, GOOS string
}

// xdgConfig is $XDG_CONFIG_HOME when it is set to an absolute path (the
// XDG Base Directory rule), else ~/.config.
func (loc Location) xdgConfig() string {
	if strings.HasPrefix(loc.XDGConfigHome, "/") {
		return loc.XDGConfigHome
	}
	return join(loc.GOOS, loc.Home, ".config")
}

// Path is h's file at loc: the first candidate that exists, else the
// first one. exists is injected (os.Stat in production).
func (h Host) Path(loc Location, exists func(string) bool) string {
	paths := h.paths(loc)
	for _, p := range paths {
		if exists(p) {
			return p
		}
	}
	return paths[0]
}

// Exists is the production exists for Path.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// typedEntry is a stdio entry with its type (Claude Code, VS Code).
type typedEntry struct {
	Type    string    `json:"type"`
	Command string    `json:"command"`
	Args    []string  `json:"args"`
	Env     *struct{} `json:"env,omitempty"`
}

type plainEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// opencodeEntry is opencode's local server: the command is one array.
type opencodeEntry struct {
	Type    string   `json:"type"`
	Command []string `json:"command"`
	Enabled bool     `json:"enabled"`
}

func inHome(elem ...string) func(loc Location) []string {
	return func(loc Location) []string { return []string{join(loc.GOOS, append([]string{loc.Home}, elem...)...)} }
}

// appConfig is a file in the per-user application folder: Application
// Support on macOS, %APPDATA% (AppData\Roaming) on Windows, and on Linux
// and the rest $XDG_CONFIG_HOME, else ~/.config (Electron's rule).
func appConfig(elem ...string) func(loc Location) []string {
	return func(loc Location) []string {
		var base []string
		switch loc.GOOS {
		case "darwin":
			base = []string{loc.Home, "Library", "Application Support"}
		case "windows":
			base = []string{loc.Home, "AppData", "Roaming"}
		default:
			base = []string{loc.xdgConfig()}
		}
		return []string{join(loc.GOOS, append(base, elem...)...)}
	}
}

// join joins with goos's separator, so paths for another OS can be shown
// (and tested) anywhere.
func join(goos string, elem ...string) string {
	sep := "/"
	if goos == "windows" {
		sep = `\`
	}
	for i := range elem {
		if i > 0 {
			elem[i] = strings.Trim(elem[i], `/\`)
		}
	}
	return strings.TrimSuffix(elem[0], sep) + sep + strings.Join(elem[1:], sep)
}
