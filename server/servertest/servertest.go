// Package servertest starts a complete reference server for tests: the
// server on a loopback httptest listener, the development identity provider
// on another (so the login redirect crosses origins as in production), a
// store and a fake clock. Other packages' tests (CLI, conformance) use it to
// run against the real thing rather than a mock.
package servertest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/devidp"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Options adjusts the environment; the zero value is a memory store, a fake
// clock at a fixed date and default limits.
type Options struct {
	Store  store.Store
	Clock  *clock.Fake
	Limits server.Limits
	// Wrap, when set, wraps the server's handler (fault injection in tests).
	Wrap func(http.Handler) http.Handler
	// SigningKey, when set, is the JWT key (else one is kept in the store).
	SigningKey []byte
	// Verbose sends the server's logs to stderr.
	Verbose bool
}

// Env is a running reference server.
type Env struct {
	URL    string // base URL, e.g. http://127.0.0.1:41234
	Server *server.Server
	Store  store.Store
	Clock  *clock.Fake
	IdP    *httptest.Server
	HTTP   *httptest.Server
}

// Start is the fixed date every fake clock starts at, so tests are repeatable.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// New starts an environment and registers its shutdown with t.Cleanup.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if opts.Store == nil {
		opts.Store = memory.New()
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewFake(Start)
	}
	logger := slog.New(slog.DiscardHandler)
	if opts.Verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	env := &Env{Store: opts.Store, Clock: opts.Clock}

	// The server's URL must be known before the IdP (its redirect URI) and
	// the server (its issuer) are built: start the listener with a handler
	// that is filled in afterwards.
	var handler http.Handler = http.NotFoundHandler()
	env.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(env.HTTP.Close)
	env.URL = env.HTTP.URL

	var idpHandler http.Handler = http.NotFoundHandler()
	env.IdP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { idpHandler.ServeHTTP(w, r) }))
	t.Cleanup(env.IdP.Close)
	provider, err := devidp.New(devidp.Config{
		Issuer:       env.IdP.URL,
		Clock:        opts.Clock,
		Logger:       logger,
		RedirectURIs: []string{env.URL + "/auth/callback"},
	})
	if err != nil {
		t.Fatalf("servertest: dev IdP: %v", err)
	}
	idpHandler = provider.Handler()

	srv, err := server.New(context.Background(), server.Config{
		BaseURL:    env.URL,
		Store:      opts.Store,
		Clock:      opts.Clock,
		SigningKey: opts.SigningKey,
		Logger:     logger,
		Limits:     opts.Limits,
		Login: server.LoginConfig{
			Issuer:       provider.Issuer(),
			ClientID:     provider.ClientID(),
			ClientSecret: provider.ClientSecret(),
		},
	})
	if err != nil {
		t.Fatalf("servertest: server.New: %v", err)
	}
	env.Server = srv
	h := srv.Handler()
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	handler = h
	return env
}
