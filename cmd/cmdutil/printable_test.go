package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
)

// encoding/json escapes C0 controls but writes C1 controls (U+009B is a
// CSI), bidi overrides and other format characters raw: WriteJSON escapes
// them as JSON does C0, so the document stays safe on a terminal and
// decodes to the very values given.
func TestWriteJSONEscapesWhatJSONLeavesRaw(t *testing.T) {
	in := map[string]string{"name": "a\x1b]0;t\x07b\u009b31m\u202egnp\u2028\x7f\U000e0041 ünï 🔑", "plain": "mona"}
	var raw bytes.Buffer
	_ = json.NewEncoder(&raw).Encode(in)
	if !strings.ContainsRune(raw.String(), '\u009b') || !strings.ContainsRune(raw.String(), '\u202e') {
		t.Fatalf("encoding/json now escapes C1 and bidi itself: %q (escapeJSON may go)", raw.String())
	}
	var out bytes.Buffer
	if err := WriteJSON(&out, in); err != nil {
		t.Fatal(err)
	}
	for _, r := range out.String() {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			t.Fatalf("raw %U in %q", r, out.String())
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["name"] != in["name"] || back["plain"] != "mona" {
		t.Fatalf("decodes to %q (%v), want %q", back, err, in)
	}
	if !strings.Contains(out.String(), "ünï 🔑") {
		t.Errorf("printable text escaped too: %s", out.String())
	}
}

// A UI message's values go through the rule, each by its kind; the
// format and numbers are the program's.
func TestPrintableArgs(t *testing.T) {
	long := strings.Repeat("n", 300)
	got := printableArgs([]any{"a\x1bb", errors.New("line\nnext\x07"), 42, true, Message("our sentence " + long), long, nil})
	want := []any{`a\x1bb`, "line\nnext\\x07", 42, true, "our sentence " + long, strings.Repeat("n", 199) + "…", nil}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("arg %d = %#v, want %#v", i, got[i], want[i])
		}
	}
}
