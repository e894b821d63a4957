package flows

import (
	"fmt"
	"net/url"
	"strings"
)

// CanonicalResource returns the canonical form of a resource or issuer URI
// used for comparisons (RFC 8707 §2, RFC 3986 §6.2.2–6.2.3): lower-case scheme
// and host, no default port, no fragment, and an empty path for "/". Any other
// path is kept as is, so "https://h/mcp" and "https://h/mcp/" stay different
// (RFC 9728 §3.3 compares the resource exactly).
func CanonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parsing %q: %w", raw, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := u.Hostname(), u.Port()
	host = strings.ToLower(host)
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	u.User = nil
	if u.Path == "/" && u.RawQuery == "" {
		u.Path, u.RawPath = "", ""
	}
	return u.String(), nil
}

func sameURL(a, b string) bool {
	ca, err1 := CanonicalResource(a)
	cb, err2 := CanonicalResource(b)
	return err1 == nil && err2 == nil && ca == cb
}

// wellKnownInserted builds scheme://host/.well-known/{name}{path} (RFC 8414
// §3.1, RFC 9728 §3.1): the well-known segment goes between host and path,
// and a terminating "/" of the path is dropped first.
func wellKnownInserted(base *url.URL, name string) string {
	path := strings.TrimSuffix(base.EscapedPath(), "/")
	return base.Scheme + "://" + base.Host + "/.well-known/" + name + path
}

// wellKnownAppended builds {issuer}/.well-known/{name} (OpenID Connect
// Discovery 1.0 §4).
func wellKnownAppended(base *url.URL, name string) string {
	path := strings.TrimSuffix(base.EscapedPath(), "/")
	return base.Scheme + "://" + base.Host + path + "/.well-known/" + name
}

// origin returns scheme://host of u.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
