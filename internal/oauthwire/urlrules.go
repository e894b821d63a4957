package oauthwire

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// LoopbackStartPath on the loopback redirect listener redirects to the
// authorization URL: a short address to copy by hand instead of the long
// URL.
const LoopbackStartPath = "/start"

// ErrInsecureEndpoint: an endpoint is neither https nor loopback http
// (flows returns it as flows.ErrInsecureEndpoint).
var ErrInsecureEndpoint = errors.New("endpoint is not https or loopback http")

// CheckSecure refuses anything but https, or http on a loopback host
// (127.0.0.0/8, ::1, localhost) as RFC 8252 §8.3 allows for native apps.
func CheckSecure(what, raw string, allowHTTP bool) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", what, raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if allowHTTP || IsLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%s %q: %w", what, raw, ErrInsecureEndpoint)
}

// IsLoopbackHost reports whether h names the loopback interface.
func IsLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ErrNotLaunchable matches every URL refused by CheckLaunchable.
var ErrNotLaunchable = errors.New("not a URL mcpauth hands to a browser")

// CheckLaunchable is the one rule for a URL that mcpauth hands to another
// program (the system's browser opener, --browser-command, MCPAUTH_BROWSER,
// a conformance browser driver): the same rule as the authorization
// endpoint, an absolute https URL or http on loopback (any http with
// allowHTTP, as --allow-insecure-http allows the endpoints), not beginning
// with "-". A server names these URLs (verification_uri, the authorization
// endpoint); a file: or javascript: URL would reach the program as a file to
// open or a script to run, and a relative one as an option.
func CheckLaunchable(raw string, allowHTTP bool) error {
	if strings.HasPrefix(raw, "-") {
		return fmt.Errorf("%q begins with \"-\" and would reach the program as an option: %w", raw, ErrNotLaunchable)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("%q is not an absolute URL: %w", raw, ErrNotLaunchable)
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "https" && scheme != "http" {
		return fmt.Errorf("%q is a %s: URL, not https: %w", raw, scheme, ErrNotLaunchable)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host: %w", raw, ErrNotLaunchable)
	}
	if CheckSecure("URL", raw, allowHTTP) != nil {
		return fmt.Errorf("%q is plain http to a host that is not loopback: %w", raw, ErrNotLaunchable)
	}
	return nil
}
