// Package browserurl models how a browser resolves a URL it is sent to (a
// Location header, a link), for tests and checks that must judge where a
// redirect really leads rather than what a Go parser makes of it.
package browserurl

import (
	"net/url"
	"strings"
)

// Resolve resolves ref against base the way a browser's URL parser does for
// an http(s) base (WHATWG URL standard, basic URL parser): it strips leading
// and trailing C0 controls and spaces, removes every tab and newline, reads
// "\" as "/", then resolves. Nil means the browser would not navigate.
func Resolve(base *url.URL, ref string) *url.URL {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= 0x20 })
	ref = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(ref)
	ref = strings.ReplaceAll(ref, "\\", "/")
	u, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	return base.ResolveReference(u)
}

// SameOrigin reports whether a and b share scheme, host and port.
func SameOrigin(a, b *url.URL) bool {
	return a != nil && b != nil && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
