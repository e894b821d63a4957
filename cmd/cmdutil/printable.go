package cmdutil

import (
	"bytes"
	"fmt"
	"reflect"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// The printing rule (redact.Clean) for what commands show of a server's or
// a token's words. The UI applies it to every argument of its messages,
// tablefmt to every cell and WriteJSON to every string; these are for the
// few lines a command writes itself.
var (
	// Field is one value on one line, at most redact.MaxField runes.
	Field = redact.Field
	// Line is a long value on one line (a URL to copy, an id on stdout).
	Line = redact.Line
	// Text is a message: newlines kept, at most redact.MaxText runes.
	Text = redact.Text
)

// Message is a UI argument that is a sentence quoting values, not one
// value (a discovery warning): it is bounded as a message, not a field.
type Message string

// printableArgs applies the printing rule to a message's arguments: an
// error is a message; numbers and booleans are ours; anything else (a
// string, a URL, a user, a list) is one value. The format itself is the
// program's own text.
func printableArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			out[i] = a
		case Message:
			out[i] = redact.Text(string(v))
		case error:
			out[i] = redact.Text(v.Error())
		default:
			switch reflect.TypeOf(a).Kind() {
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
				out[i] = a
				continue
			}
			out[i] = redact.Field(fmt.Sprint(a))
		}
	}
	return out
}

// escapeJSON writes the runes JSON leaves raw but a terminal may obey (C1
// controls, bidi overrides) as \u escapes: the document decodes to the
// same values. encoding/json has already escaped C0 controls, and only
// strings hold runes outside ASCII.
func escapeJSON(doc []byte) []byte {
	if !bytes.ContainsFunc(doc, redact.Unsafe) {
		return doc
	}
	out := make([]byte, 0, len(doc)+32)
	for len(doc) > 0 {
		r, size := utf8.DecodeRune(doc)
		switch {
		case !redact.Unsafe(r) || r == '\n' || r == '\t': // the indentation's
			out = append(out, doc[:size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		doc = doc[size:]
	}
	return out
}
