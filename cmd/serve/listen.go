package serve

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
)

// listen opens addr for flag (--addr, --metrics-addr). A busy port is the
// common start-up failure: the error names the flag with a port that is
// free right now, and --base-url when it names the old port.
func listen(flag, addr, baseURL string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, clierr.WithExit(clierr.ExitFailure, fmt.Errorf("listening on %s (%s): %w", addr, flag, err))
	}
	msg := fmt.Sprintf("%s is already in use, by another program or another mcpauth serve", addr)
	if host, _, splitErr := net.SplitHostPort(addr); splitErr == nil {
		if free, ferr := net.Listen("tcp", net.JoinHostPort(host, "0")); ferr == nil {
			msg += fmt.Sprintf(": use another port, e.g. %s %s (free just now)", flag, free.Addr())
			free.Close()
		} else {
			msg += fmt.Sprintf(": use another port, e.g. %s %s", flag, net.JoinHostPort(host, "<another port>"))
		}
	}
	if baseURL != "" {
		msg += ", and change --base-url to match"
	}
	return nil, clierr.WithExit(clierr.ExitFailure, errors.New(msg))
}
