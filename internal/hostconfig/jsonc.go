package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// parseJSONC parses a JSON or JSONC file whose top level must be an
// object; no file (or an empty one) is an empty object.
func parseJSONC(data []byte) (hujson.Value, *hujson.Object, error) {
	if isBlank(data) {
		data = []byte("{}\n")
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return hujson.Value{}, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return hujson.Value{}, nil, fmt.Errorf("the top level is not a JSON object")
	}
	return root, obj, nil
}

func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// container finds the object holding the entries; nil when there is none.
func container(obj *hujson.Object, key string) (*hujson.Object, error) {
	i := member(obj, key)
	if i < 0 {
		return nil, nil
	}
	c, ok := obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%q is not a JSON object", key)
	}
	return c, nil
}

// standard is v as standard JSON.
func standard(v hujson.Value) []byte {
	v = v.Clone()
	v.Standardize()
	return v.Pack()
}

func jsonEntries(data []byte, key string) ([]Named, error) {
	_, obj, err := parseJSONC(data)
	if err != nil {
		return nil, err
	}
	c, err := container(obj, key)
	if c == nil || err != nil {
		return nil, err
	}
	var out []Named
	for _, m := range c.Members {
		e, ok := decodeEntry(standard(m.Value))
		out = append(out, Named{Name: m.Name.Value.(hujson.Literal).String(), Entry: e, Stdio: ok})
	}
	return out, nil
}

// jsonSet sets key.name to value. New text follows the file's indentation;
// the rest of the file is kept byte for byte, comments included.
func jsonSet(data []byte, key, name string, value any) ([]byte, error) {
	root, obj, err := parseJSONC(data)
	if err != nil {
		return nil, err
	}
	indent := indentOf(obj)
	c, err := container(obj, key)
	if err != nil {
		return nil, err
	}
	if c == nil {
		v, err := indented(map[string]any{name: value}, indent, 1)
		if err != nil {
			return nil, err
		}
		appendMember(obj, key, v, indent, 1)
	} else {
		v, err := indented(value, indent, 2)
		if err != nil {
			return nil, err
		}
		if i := member(c, name); i >= 0 {
			c.Members[i].Value.Value = v.Value
		} else {
			appendMember(c, name, v, indent, 2)
		}
	}
	out := root.Pack()
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, nil
}

// indentOf is the file's indentation unit: what precedes its first member
// on that member's line, two spaces when that tells nothing.
func indentOf(obj *hujson.Object) string {
	if len(obj.Members) > 0 {
		before := string(obj.Members[0].Name.BeforeExtra)
		if i := strings.LastIndexByte(before, '\n'); i >= 0 {
			if ws := before[i+1:]; ws != "" && strings.Trim(ws, " \t") == "" {
				return ws
			}
		}
	}
	return "  "
}

// indented is v as JSON text for a value at depth (of indent units).
func indented(v any, indent string, depth int) (hujson.Value, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(strings.Repeat(indent, depth), indent)
	if err := enc.Encode(v); err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(bytes.TrimSpace(b.Bytes()))
}

// appendMember adds name: v as the last member of obj, an object at
// depth-1, on a line of its own.
func appendMember(obj *hujson.Object, name string, v hujson.Value, indent string, depth int) {
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra("\n" + strings.Repeat(indent, depth)), Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: v.Value},
	}
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // the file ends members with a comma
	}
	if !bytes.Contains(obj.AfterExtra, []byte("\n")) {
		obj.AfterExtra = hujson.Extra("\n" + strings.Repeat(indent, depth-1))
	}
	// The last member's trailing comment stays on its line.
	if prev := firstLine(obj.AfterExtra); !isBlank(prev) {
		m.Name.BeforeExtra = append(prev, m.Name.BeforeExtra...)
		obj.AfterExtra = afterFirstLine(obj.AfterExtra)
	}
	obj.Members = append(obj.Members, m)
}

func jsonRemove(data []byte, key, name string) ([]byte, bool, error) {
	root, obj, err := parseJSONC(data)
	if err != nil {
		return nil, false, err
	}
	c, err := container(obj, key)
	if c == nil || err != nil {
		return data, false, err
	}
	i := member(c, name)
	if i < 0 {
		return data, false, nil
	}
	gone := c.Members[i]
	c.Members = append(c.Members[:i], c.Members[i+1:]...)
	// What precedes the removed member's line (the previous member's
	// trailing comment) stays; what follows on its line (its own
	// trailing comment) goes with it.
	kept := firstLine(gone.Name.BeforeExtra)
	if i < len(c.Members) {
		next := &c.Members[i].Name
		next.BeforeExtra = append(kept, afterFirstLine(next.BeforeExtra)...)
	} else {
		c.AfterExtra = append(kept, afterFirstLine(c.AfterExtra)...)
		if n := len(c.Members); n > 0 {
			// The new last member ends as the removed one did: with a
			// trailing comma or without.
			last := &c.Members[n-1].Value
			switch {
			case gone.Value.AfterExtra == nil && isBlank(last.AfterExtra):
				last.AfterExtra = nil
			case gone.Value.AfterExtra != nil && last.AfterExtra == nil:
				last.AfterExtra = hujson.Extra{}
			}
		}
	}
	if oneLine(c) && isBlank(c.AfterExtra) {
		c.AfterExtra = nil // {} or {"a": 1} again, as before the add
	}
	return root.Pack(), true, nil
}

// oneLine reports whether no member of obj starts a line.
func oneLine(obj *hujson.Object) bool {
	for _, m := range obj.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return false
		}
	}
	return true
}

// firstLine is b up to its first newline, when b has one (the rest of the
// preceding line); nil otherwise.
func firstLine(b hujson.Extra) hujson.Extra {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return append(hujson.Extra{}, b[:i]...)
	}
	return nil
}

// afterFirstLine is b from its first newline on, or b when it has none.
func afterFirstLine(b hujson.Extra) hujson.Extra {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i:]
	}
	return b
}
