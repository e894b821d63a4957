package hostconfig

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Entry is a stdio server: a command and its arguments.
type Entry struct {
	Command string
	Args    []string
}

// Proxy is the entry that runs mcpauth's proxy for url with --login:
// bin is the absolute path of mcpauth, flags the global flags the host
// must pass (hosts filter the environment).
func Proxy(bin, url string, flags []string) Entry {
	return Entry{Command: bin, Args: append([]string{"proxy", url, "--login"}, flags...)}
}

// URL is the server an mcpauth proxy entry serves, or "" for any other
// entry.
func (e Entry) URL() string {
	base := e.Command[strings.LastIndexAny(e.Command, `/\`)+1:]
	if base != "mcpauth" && base != "mcpauth.exe" || len(e.Args) < 2 || e.Args[0] != "proxy" {
		return ""
	}
	return e.Args[1]
}

// Equal reports whether two entries run the same thing.
func (e Entry) Equal(o Entry) bool {
	return e.Command == o.Command && slices.Equal(e.Args, o.Args)
}

// decodeEntry reads an entry from standard JSON: command as a string with
// args, or as one array (opencode); ok is false for any other server (a
// remote one, with a url).
func decodeEntry(raw []byte) (Entry, bool) {
	var v struct {
		Command json.RawMessage `json:"command"`
		Args    []string        `json:"args"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return Entry{}, false
	}
	var cmd string
	if json.Unmarshal(v.Command, &cmd) == nil && cmd != "" {
		return Entry{Command: cmd, Args: v.Args}, true
	}
	var all []string
	if json.Unmarshal(v.Command, &all) == nil && len(all) > 0 {
		return Entry{Command: all[0], Args: all[1:]}, true
	}
	return Entry{}, false
}

// nameByte reports a byte every host accepts in an entry name.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// CheckName accepts names every host accepts (Codex and Claude Code take
// only letters, digits, '_' and '-'), 1 to 64 of them.
func CheckName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		ok = nameByte(name[i])
	}
	if !ok {
		return fmt.Errorf("name %q: use 1 to 64 letters, digits, '_' or '-'", name)
	}
	return nil
}

// NameFor derives an entry name from a server URL: its host name without
// an mcp/www/api prefix label and the top-level domain, and the port when
// there is one (mcp.example.com -> example; 127.0.0.1:8080 ->
// 127-0-0-1-8080; localhost:3000 -> localhost-3000).
func NameFor(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Hostname() == "" {
		return "mcp"
	}
	host := strings.ToLower(u.Hostname())
	labels := strings.Split(host, ".")
	if net.ParseIP(host) == nil && len(labels) > 1 {
		labels = labels[:len(labels)-1] // the top-level domain
		for len(labels) > 1 && (labels[0] == "mcp" || labels[0] == "www" || labels[0] == "api") {
			labels = labels[1:]
		}
	}
	name := strings.Join(labels, "-")
	if p := u.Port(); p != "" {
		name += "-" + p
	}
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r > 0x7f || !nameByte(byte(r)) }), "-")
	if name = strings.Trim(name, "-"); len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "mcp"
	}
	return name
}
