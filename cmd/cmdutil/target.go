package cmdutil

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/reach"
)

// TargetArgs accepts exactly one <mcp-url> and names it when it is missing,
// instead of cobra's "accepts 1 arg(s), received 0".
func TargetArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return FlagErrorf("missing <mcp-url>, the MCP server's URL: %s <mcp-url>, e.g. %s http://127.0.0.1:8080/mcp", cmd.CommandPath(), cmd.CommandPath())
	case len(args) > 1:
		return FlagErrorf("%s takes one <mcp-url>, got %d arguments", cmd.CommandPath(), len(args))
	}
	return nil
}

// ParseTarget checks that arg is an http(s) URL. Anything else is a usage
// error (exit 2) with the URL the user probably meant: http:// for loopback
// hosts, https:// otherwise.
func ParseTarget(arg string) (string, error) {
	u, err := url.Parse(arg)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return arg, nil
	}
	if err == nil && u.Scheme != "" && u.Opaque == "" && u.Host != "" {
		return "", FlagErrorf("%q is not an http(s) URL: MCP servers are reached over http or https", arg)
	}
	guess := strings.TrimPrefix(arg, "//")
	host := guess
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || strings.ContainsAny(guess, " \t") {
		return "", FlagErrorf("%q is not a URL: give the MCP server's URL, e.g. http://127.0.0.1:8080/mcp", arg)
	}
	scheme := "https://"
	if reach.IsLoopback(host) {
		scheme = "http://"
	}
	return "", FlagErrorf("%q is not a URL; did you mean %s%s?", arg, scheme, guess)
}

// Phase records what a command is doing, so an interruption can say what
// it interrupted. Safe for concurrent use (flows call back on goroutines).
type Phase struct {
	mu   sync.Mutex
	what string
}

// Set records the current step, e.g. "waiting for the browser".
func (p *Phase) Set(what string) {
	p.mu.Lock()
	p.what = what
	p.mu.Unlock()
}

func (p *Phase) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.what
}

// Cancelled turns an error caused by ctx's cancellation (Ctrl-C) into
// "<verb> cancelled while <phase>" with exit 130, instead of the bare
// "context canceled". Other errors pass through.
func Cancelled(ctx context.Context, verb string, phase *Phase, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	msg := verb + " cancelled"
	if w := phase.get(); w != "" {
		msg += " while " + w
	}
	return WithExit(ExitCancelled, errors.New(msg))
}

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

// discoveryError explains a failed discovery in the user's terms, with the
// fix when there is one: the server cannot be reached, the URL is not an
// MCP endpoint (and what it is), or an unsafe-override flag df offers.
// Exit 6, or 2 for a target refused before any request.
func discoveryError(target string, disc *flows.Discovery, err error, df DiscoverFlags) error {
	if errors.Is(err, flows.ErrInsecureEndpoint) {
		return insecureError(target, err, df)
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
	return WithExit(ExitNetwork, withNextStep(fmt.Errorf("discovering %s: %w", target, err), df.bound))
}

// insecureError names the way out of a refused plain-http URL: https, or
// the override flag when the command has it. A target refused before any
// request is a usage error; an endpoint the server advertised is exit 6.
func insecureError(target string, err error, df DiscoverFlags) error {
	if u, perr := url.Parse(target); perr == nil && u.Scheme == "http" && !reach.IsLoopback(u.Hostname()) {
		u.Scheme = "https"
		fix := "use " + u.String()
		if step := NextStep(err, df.bound); step != "" {
			fix += ", or " + step
		}
		return FlagErrorf("%s is plain http to a host that is not loopback: tokens would cross the network unencrypted; %s", target, fix)
	}
	return WithExit(ExitNetwork, withNextStep(fmt.Errorf("discovering %s: %w", target, err), df.bound))
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
