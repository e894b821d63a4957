package server

import (
	"strings"

	"golang.org/x/net/http/httpguts"
)

// forwardedFors reads the for= value of every element of Forwarded fields
// (RFC 7239 §4), left-most first; an element without one gives "", which
// names no address. Empty elements are dropped (RFC 9110 §5.6.1). ok is
// false when the fields do not parse, a pair given twice in one element
// included: a value quoted open by a client could swallow what a proxy
// appended after it, so nothing in such a header is believed.
func forwardedFors(fields []string) (fors []string, ok bool) {
	for _, s := range fields {
		var (
			forValue  string
			inElement bool
			seen      []string // pair names in this element
		)
		for i := 0; ; {
			i = skipOWS(s, i)
			if i == len(s) || s[i] == ',' {
				if inElement {
					fors = append(fors, forValue)
				}
				if i == len(s) {
					break
				}
				forValue, inElement, seen = "", false, seen[:0]
				i++
				continue
			}
			inElement = true
			if s[i] == ';' {
				i++
				continue
			}
			name, value, next, ok := forwardedPair(s, i)
			if !ok {
				return nil, false
			}
			name = strings.ToLower(name)
			for _, n := range seen {
				if n == name {
					return nil, false
				}
			}
			seen = append(seen, name)
			if name == "for" {
				forValue = value
			}
			i = skipOWS(s, next)
			if i < len(s) && s[i] != ',' && s[i] != ';' {
				return nil, false
			}
		}
	}
	return fors, true
}

// forwardedPair reads token "=" (token / quoted-string) at s[i:].
func forwardedPair(s string, i int) (name, value string, next int, ok bool) {
	start := i
	for i < len(s) && httpguts.IsTokenRune(rune(s[i])) {
		i++
	}
	if i == start || i == len(s) || s[i] != '=' {
		return "", "", 0, false
	}
	name = s[start:i]
	i++
	if i < len(s) && s[i] == '"' {
		var b strings.Builder
		for i++; i < len(s); i++ {
			switch c := s[i]; c {
			case '"':
				return name, b.String(), i + 1, true
			case '\\':
				if i+1 == len(s) {
					return "", "", 0, false
				}
				i++
				b.WriteByte(s[i])
			default:
				b.WriteByte(c)
			}
		}
		return "", "", 0, false // unterminated
	}
	start = i
	for i < len(s) && httpguts.IsTokenRune(rune(s[i])) {
		i++
	}
	if i == start {
		return "", "", 0, false
	}
	return name, s[start:i], i, true
}

func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
