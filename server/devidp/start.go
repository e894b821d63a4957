package devidp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is a Provider serving on its own listener.
type Running struct {
	provider *Provider
	srv      *http.Server
}

// Start listens on addr (e.g. "127.0.0.1:0"), sets cfg.Issuer to
// http://<the address actually bound>, replacing any value given, and serves
// the provider until Shutdown or Close. ctx bounds only the listen call.
func Start(ctx context.Context, addr string, cfg Config) (*Running, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("devidp: listen on %s: %w", addr, err)
	}
	cfg.Issuer = "http://" + ln.Addr().String()
	p, err := New(cfg)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("devidp: serve", "err", err)
		}
	}()
	return &Running{provider: p, srv: srv}, nil
}

// URL returns the issuer URL, e.g. http://127.0.0.1:41234.
func (r *Running) URL() string { return r.provider.Issuer() }

// Provider returns the running provider (for ClientID and ClientSecret).
func (r *Running) Provider() *Provider { return r.provider }

// Shutdown stops accepting connections and waits for active requests, up to ctx.
func (r *Running) Shutdown(ctx context.Context) error { return r.srv.Shutdown(ctx) }

// Close stops the server at once.
func (r *Running) Close() error { return r.srv.Close() }
