package serve

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpauth/mcpauth/server"
)

// startMetrics serves m at /metrics on its own listener at addr, apart from
// the public one, so a reverse proxy in front of the server never exposes
// it. It returns the listener's URL and a function that stops it: at once,
// since a scrape cut short loses nothing.
func startMetrics(addr string, m *server.Metrics, log *slog.Logger) (string, func() error, error) {
	ln, err := listen("--metrics-addr", addr, "")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return "http://" + ln.Addr().String() + "/metrics", hs.Close, nil
}
