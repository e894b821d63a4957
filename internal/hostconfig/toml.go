package hostconfig

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Codex's config.toml is edited as text, a [key.name] table at a time, as
// no TOML library keeps comments; every edit is checked by parsing the
// result and comparing it with the intended document.

func parseTOML(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	return doc, nil
}

func tomlServers(doc map[string]any, key string) (map[string]any, error) {
	v, ok := doc[key]
	if !ok {
		return nil, nil
	}
	servers, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a table", key)
	}
	return servers, nil
}

func tomlEntries(data []byte, key string) ([]Named, error) {
	doc, err := parseTOML(data)
	if err != nil {
		return nil, err
	}
	servers, err := tomlServers(doc, key)
	if err != nil {
		return nil, err
	}
	var out []Named
	for name, v := range servers {
		e, ok := tomlEntry(v)
		out = append(out, Named{Name: name, Entry: e, Stdio: ok})
	}
	return out, nil
}

func tomlEntry(v any) (Entry, bool) {
	t, _ := v.(map[string]any)
	cmd, _ := t["command"].(string)
	if cmd == "" {
		return Entry{}, false
	}
	e := Entry{Command: cmd}
	args, _ := t["args"].([]any)
	for _, a := range args {
		s, _ := a.(string)
		e.Args = append(e.Args, s)
	}
	return e, true
}

// tomlTable is the table `codex mcp add` writes: command, then args.
func tomlTable(key, name string, e Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\ncommand = %s\n", key, name, tomlString(e.Command))
	if len(e.Args) > 0 {
		quoted := make([]string, len(e.Args))
		for i, a := range e.Args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
	}
	return b.String()
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlHeader matches a table header line; compiled on first use, not at
// start-up, which every command would pay for.
var tomlHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$`)
})

// tomlBlock finds the lines of table key.name and its subtables: [start,
// end) line indexes, found false when no such header exists.
func tomlBlock(lines []string, key, name string) (start, end int, found bool) {
	own := func(path string) bool {
		path = strings.ReplaceAll(strings.ReplaceAll(path, `"`, ""), "'", "")
		parts := strings.Split(path, ".")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return len(parts) >= 2 && parts[0] == key && parts[1] == name
	}
	start = -1
	for i, l := range lines {
		m := tomlHeader().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch {
		case start < 0 && own(m[1]):
			start = i
		case start >= 0 && !own(m[1]):
			return start, trimBlank(lines, start, i), true
		}
	}
	if start < 0 {
		return 0, 0, false
	}
	return start, trimBlank(lines, start, len(lines)), true
}

// trimBlank moves end back over blank lines and comment lines that
// precede the next table (they belong to it).
func trimBlank(lines []string, start, end int) int {
	for end > start+1 {
		l := strings.TrimSpace(lines[end-1])
		if l != "" && !strings.HasPrefix(l, "#") {
			break
		}
		end--
	}
	return end
}

func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func tomlSet(data []byte, key, name string, e Entry) ([]byte, error) {
	doc, err := parseTOML(data)
	if err != nil {
		return nil, err
	}
	table := strings.TrimSuffix(tomlTable(key, name, e), "\n")
	lines := splitLines(data)
	if start, end, found := tomlBlock(lines, key, name); found {
		lines = append(lines[:start], append([]string{table}, lines[end:]...)...)
	} else {
		if servers, _ := tomlServers(doc, key); servers[name] != nil {
			return nil, fmt.Errorf("%s.%s is not written as a [%[1]s.%[2]s] table, which is all mcpauth edits: change it by hand", key, name)
		}
		if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) != "" {
			lines = append(lines, "")
		}
		lines = append(lines, table)
	}
	out := []byte(strings.Join(lines, "\n") + "\n")
	return out, checkTOML(doc, out, key, name, &e)
}

func tomlRemove(data []byte, key, name string) ([]byte, bool, error) {
	doc, err := parseTOML(data)
	if err != nil {
		return nil, false, err
	}
	servers, _ := tomlServers(doc, key)
	if servers[name] == nil {
		return data, false, nil
	}
	lines := splitLines(data)
	start, end, found := tomlBlock(lines, key, name)
	if !found {
		return nil, false, fmt.Errorf("%s.%s is not written as a [%[1]s.%[2]s] table, which is all mcpauth edits: remove it by hand", key, name)
	}
	if start > 0 && strings.TrimSpace(lines[start-1]) == "" {
		start-- // the blank line that separated it
	}
	lines = append(lines[:start], lines[end:]...)
	out := []byte(strings.Join(lines, "\n") + "\n")
	if len(lines) == 0 {
		out = nil
	}
	return out, true, checkTOML(doc, out, key, name, nil)
}

var errTOMLEdit = errors.New("the edited file would not read as intended")

// checkTOML parses out and compares it with before, where key.name is now
// e (nil: removed) and nothing else changed.
func checkTOML(before map[string]any, out []byte, key, name string, e *Entry) error {
	after, err := parseTOML(out)
	if err != nil {
		return fmt.Errorf("%w (%v): edit it by hand", errTOMLEdit, err)
	}
	want := map[string]any{}
	for k, v := range before {
		want[k] = v
	}
	servers := map[string]any{}
	if s, _ := tomlServers(before, key); s != nil {
		for k, v := range s {
			servers[k] = v
		}
	}
	delete(servers, name)
	if e != nil {
		servers[name] = tomlDoc(*e)
	}
	want[key] = servers
	// An empty table and none read alike: [key.name] made the table.
	for _, doc := range []map[string]any{want, after} {
		if s, _ := doc[key].(map[string]any); s != nil && len(s) == 0 {
			delete(doc, key)
		}
	}
	if !reflect.DeepEqual(want, after) {
		return fmt.Errorf("%w: edit it by hand", errTOMLEdit)
	}
	return nil
}

func tomlDoc(e Entry) map[string]any {
	t := map[string]any{"command": e.Command}
	if len(e.Args) > 0 {
		args := make([]any, len(e.Args))
		for i, a := range e.Args {
			args[i] = a
		}
		t["args"] = args
	}
	return t
}
