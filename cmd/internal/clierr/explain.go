package clierr

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/reach"
)

// Unreachable rewrites a request error that got no HTTP answer as
// "cannot reach HOST:PORT (cause)" with exit 6; other errors pass through.
func Unreachable(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	if cause := reach.Cause(err, err.Error()); cause != "" {
		return WithExit(ExitNetwork, fmt.Errorf("cannot reach %s (%s)", reach.HostPort(rawURL), cause))
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return WithExit(ExitNetwork, withNextStep(fmt.Errorf("cannot verify the certificate of %s (%w)", reach.HostPort(rawURL), certErr), false))
	}
	return err
}

// Discovery explains a failed discovery in the user's terms, with the fix
// when there is one: the server cannot be reached, the URL is not an MCP
// endpoint (and what it is), or an unsafe-override flag the command offers
// (overrides: it has them). Exit 6, or 2 for a target refused before any
// request.
func Discovery(target string, disc *flows.Discovery, err error, overrides bool) error {
	if errors.Is(err, flows.ErrInsecureEndpoint) {
		return insecure(target, err, overrides)
	}
	if disc != nil && len(disc.Probes) > 0 {
		answered := false
		cause := ""
		for _, p := range disc.Probes {
			if p.Status != 0 {
				answered = true
			} else if c := reach.Cause(nil, p.Err); c != "" && cause == "" {
				cause = c
			}
		}
		if !answered && cause != "" {
			return WithExit(ExitNetwork, fmt.Errorf("cannot reach %s (%s)", reach.HostPort(target), cause))
		}
		var rm *flows.ResourceMismatchError
		if answered && errors.As(err, &rm) {
			if msg := resourceMismatch(target, rm); msg != "" {
				return WithExit(ExitNetwork, errors.New(msg))
			}
		}
		if answered && (errors.Is(err, flows.ErrNoMetadata) || errors.Is(err, flows.ErrResourceMismatch)) {
			if hint := reach.NotMCP(target, disc); hint != "" {
				return WithExit(ExitNetwork, errors.New(hint))
			}
		}
	}
	// Discovery moves past failing probes; the last network failure (an
	// unknown CA, say) is usually the real cause.
	if disc != nil {
		for i := len(disc.Probes) - 1; i >= 0; i-- {
			if p := disc.Probes[i]; p.Status == 0 && p.Err != "" {
				err = fmt.Errorf("%w (%s: %s)", err, p.URL, p.Err)
				break
			}
		}
	}
	return WithExit(ExitNetwork, withNextStep(fmt.Errorf("discovering %s: %w", target, err), overrides))
}

// resourceMismatch names the resource the server declared when it is the
// target's path under another host spelling, or "" (another page of an MCP
// server is explained by reach.NotMCP). Tokens are bound to the declared
// resource, so when it is the same server (a loopback alias: localhost for
// 127.0.0.1, same scheme and port) it is the URL to use; a host elsewhere is
// only named, not recommended.
func resourceMismatch(target string, rm *flows.ResourceMismatchError) string {
	t, terr := url.Parse(target)
	d, derr := url.Parse(rm.Declared)
	if terr != nil || derr != nil || strings.TrimSuffix(t.Path, "/") != strings.TrimSuffix(d.Path, "/") {
		return ""
	}
	msg := fmt.Sprintf("%s declares its resource as %s, not %s (RFC 9728 §3.3: the URL must name the resource the server declares)", target, rm.Declared, rm.Expected)
	if t.Scheme == d.Scheme && t.Port() == d.Port() && reach.IsLoopback(t.Hostname()) && reach.IsLoopback(d.Hostname()) {
		msg += fmt.Sprintf("; use %s instead (%s and %s are different origins to OAuth)", rm.Declared, t.Hostname(), d.Hostname())
	}
	return msg
}

// insecure names the way out of a refused plain-http URL: https, or
// the override flag when the command has it. A target refused before any
// request is a usage error; an endpoint the server advertised is exit 6.
func insecure(target string, err error, overrides bool) error {
	if u, perr := url.Parse(target); perr == nil && u.Scheme == "http" && !reach.IsLoopback(u.Hostname()) {
		u.Scheme = "https"
		fix := "use " + u.String()
		if step := NextStep(err, overrides); step != "" {
			fix += ", or " + step
		}
		return FlagErrorf("%s is plain http to a host that is not loopback: tokens would cross the network unencrypted; %s", target, fix)
	}
	return WithExit(ExitNetwork, withNextStep(fmt.Errorf("discovering %s: %w", target, err), overrides))
}

// CheckPort fails early, before any browser opens, when the --port asked
// for is taken, and suggests one that is free.
func CheckPort(port int) error {
	if port == 0 {
		return nil
	}
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		return ln.Close()
	}
	return PortError(port, err)
}

// PortError explains a loopback port that cannot be bound, with a free
// port to use instead; errors that are not "in use" pass through.
func PortError(port int, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	hint := "leave --port out to use a free one"
	for p := port + 1; p < port+50 && p < 65536; p++ {
		if ln, lerr := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", p)); lerr == nil {
			ln.Close()
			hint = fmt.Sprintf("try --port %d, or leave --port out to use a free one", p)
			break
		}
	}
	return FlagErrorf("port %d on 127.0.0.1 is already in use (another program, or another mcpauth login); %s", port, hint)
}
