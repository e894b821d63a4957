package server

import "encoding/json"

// The server's hot responses (token, ping, OAuth errors) and its tokens'
// claims are appended rather than encoded by encoding/json, whose
// reflection was a large part of each; every appender is tested against
// encoding/json's output for the same value.

// plainJSONString: s needs no escaping in JSON (nor HTML-escaping, which
// encoding/json applies to <, > and &).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendMember appends key, written out with its leading { or , and its
// colon, then s as a JSON string.
func appendMember(b []byte, key, s string) []byte {
	return appendJSONString(append(b, key...), s)
}

// appendJSONString appends s as a JSON string the way encoding/json writes
// it (HTML-escaped): a plain string as it is, any other through
// encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	if plainJSONString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
