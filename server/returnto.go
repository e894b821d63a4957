package server

import (
	"net/url"
	"strings"
)

// safeReturnTo keeps the redirect after sign-in on this site. It reasons
// like a browser rather than matching prefixes: browsers drop tabs and
// newlines from a URL before parsing it and read "\" as "/" (WHATWG URL
// standard), so "/\t/evil.example" and "/\evil.example" both become the
// scheme-relative "//evil.example". Anything that is not a plain path-absolute
// reference which, resolved against base, keeps base's scheme, host and port
// is replaced by "/" (RFC 9700 §4.11).
func safeReturnTo(base *url.URL, v string) string {
	const fallback = "/"
	if v == "" || !strings.HasPrefix(v, "/") || hasUnsafeByte(v) {
		return fallback
	}
	// A value may be decoded again on its way (by a proxy, a framework or a
	// second round of our own redirects): refuse the dangerous characters in
	// every encoding such a decoding would reveal, and a leading "//" too.
	decoded := v
	for range 3 {
		d, err := url.PathUnescape(decoded)
		if err != nil {
			return fallback
		}
		if d == decoded {
			break
		}
		if strings.ContainsAny(d, "\\\t\n\r") || oddPath(d) {
			return fallback
		}
		decoded = d
	}
	if oddPath(v) {
		return fallback
	}
	ref, err := url.Parse(v)
	if err != nil || ref.Scheme != "" || ref.Host != "" || ref.Opaque != "" || ref.User != nil || !strings.HasPrefix(ref.Path, "/") {
		return fallback
	}
	if !sameOrigin(base, base.ResolveReference(ref)) {
		return fallback
	}
	return v
}

// hasUnsafeByte reports characters that never belong in a return path: C0
// controls, space, DEL, backslash and anything outside ASCII (look-alike
// slashes such as U+2215 or U+FF0F; our own paths are always ASCII, since
// requireSession passes RequestURI, which is escaped).
func hasUnsafeByte(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return true
		}
	}
	return false
}

// oddPath reports a path with empty or dot segments ("//x", "/./", "/../"):
// our own paths have none, and they are how "/.//evil" style values turn
// into a scheme-relative URL after some normaliser collapses them.
func oddPath(v string) bool {
	p, _, _ := strings.Cut(v, "?")
	p, _, _ = strings.Cut(p, "#")
	segs := strings.Split(p, "/")
	for i, seg := range segs[1:] { // segs[0] is before the leading "/"
		last := i == len(segs)-2
		if (seg == "" && !last) || seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") {
			return true
		}
	}
	return false
}

func sameOrigin(a, b *url.URL) bool {
	return a != nil && b != nil && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
