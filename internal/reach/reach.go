// Package reach is how the CLI reaches servers and says why it could not:
// the proxy choice from the environment (never for loopback), and the
// cause of a request that got no answer, or got one from something that is
// not an MCP server, in the user's words.
package reach

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/http/httpproxy"

	"github.com/mcpauth/mcpauth/flows"
)

// Proxy is http.ProxyFromEnvironment with the variables read through
// getenv (so tests need no process environment), and never a proxy for a
// loopback host: the login callback and local servers stay direct even
// when NO_PROXY forgets them.
func Proxy(getenv func(string) string) func(*http.Request) (*url.URL, error) {
	either := func(upper string) string {
		if v := getenv(upper); v != "" {
			return v
		}
		return getenv(strings.ToLower(upper))
	}
	proxy := (&httpproxy.Config{
		HTTPProxy:  either("HTTP_PROXY"),
		HTTPSProxy: either("HTTPS_PROXY"),
		NoProxy:    either("NO_PROXY"),
		CGI:        getenv("REQUEST_METHOD") != "",
	}).ProxyFunc()
	return func(r *http.Request) (*url.URL, error) {
		if IsLoopback(r.URL.Hostname()) {
			return nil, nil
		}
		return proxy(r.URL)
	}
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HostPort is raw's host with its explicit or default port, as a
// message names the place it could not reach.
func HostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// Cause names why a request got no HTTP answer, from the error or its
// text (discovery records probes' errors as text), or "" when it is not a
// reachability failure.
func Cause(err error, text string) string {
	var dnsErr *net.DNSError
	switch {
	case err != nil && errors.Is(err, syscall.ECONNREFUSED), strings.Contains(text, "connection refused"):
		return "connection refused"
	case err != nil && errors.As(err, &dnsErr), strings.Contains(text, "no such host"):
		return "no such host"
	case err != nil && errors.Is(err, syscall.ECONNRESET), strings.Contains(text, "connection reset"):
		return "connection reset"
	case err != nil && errors.Is(err, syscall.EHOSTUNREACH), strings.Contains(text, "no route to host"):
		return "no route to host"
	case strings.Contains(text, "i/o timeout"), strings.Contains(text, "Client.Timeout"), strings.Contains(text, "deadline exceeded"):
		return "timed out"
	}
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return ""
}

// NotMCP is the message for a URL that answers HTTP but is not an
// OAuth-protected MCP endpoint: what it answered and the URL to try, or ""
// when the first probe got no answer.
func NotMCP(target string, disc *flows.Discovery) string {
	u, err := url.Parse(target)
	first := disc.Probes[0]
	if err != nil || first.Status == 0 {
		return ""
	}
	answered := "HTTP " + strconv.Itoa(first.Status)
	switch {
	case first.Status == http.StatusNotFound:
		answered += " (not found)"
	case first.Answer != "":
		answered += " with " + first.Answer
	}
	const shape = "An MCP URL names the server's MCP endpoint, like https://mcp.example.com/mcp"
	switch {
	case strings.TrimSuffix(u.Path, "/") == "/mcp":
		return fmt.Sprintf("%s is not an OAuth-protected MCP endpoint: it answered %s, and no authorization server metadata was found (run: mcpauth discover %s to see every probe)", target, answered, target)
	case first.URL != target: // a bare base URL: {base}/mcp was tried
		return fmt.Sprintf("%s is not an MCP server: %s answered %s. %s; the server's documentation gives its path", target, first.URL, answered, shape)
	}
	return fmt.Sprintf("%s is not an MCP endpoint: it answered %s. %s; did you mean %s?", target, answered, shape, u.Scheme+"://"+u.Host+"/mcp")
}
