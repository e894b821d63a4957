package flows

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

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
	if checkSecure("URL", raw, allowHTTP) != nil {
		return fmt.Errorf("%q is plain http to a host that is not loopback: %w", raw, ErrNotLaunchable)
	}
	return nil
}
