// Package local runs a complete reference server in-process on loopback: the
// server and the development identity provider, each on its own listener (so
// the login redirect crosses origins as it does in production). The
// conformance suite's --local mode, the benchmark and tests use it.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/devidp"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Options configure an Instance; the zero value is a memory store, the wall
// clock, default limits and a random port.
type Options struct {
	Addr       string // default 127.0.0.1:0
	Store      store.Store
	Clock      clock.Clock
	Limits     server.Limits
	SigningKey []byte
	// PreviousSigningKeys, SealingKey, PreviousSealingKeys: see server.Config.
	PreviousSigningKeys [][]byte
	SealingKey          []byte
	PreviousSealingKeys [][]byte
	Logger              *slog.Logger
	// Wrap, when set, wraps the server's handler (fault injection in tests).
	Wrap func(http.Handler) http.Handler
	// CacheCredentials: see server.Config.
	CacheCredentials bool
	// RefreshReuseInterval: see server.Config.
	RefreshReuseInterval time.Duration
	// TestClock, when set, is the server's clock and is exposed at
	// /api/test/clock, as `mcpauth serve --test-clock` does, so a suite can
	// move time over HTTP. It overrides Clock.
	TestClock *clock.Offset
	// MetadataDocuments: see server.Config.
	MetadataDocuments server.MetadataDocumentConfig
	// Metrics: see server.Config; the caller serves them.
	Metrics *server.Metrics
	// TrustedProxies: see server.Config.
	TrustedProxies []netip.Prefix
	// MachineClients: see server.Config.
	MachineClients []server.MachineClient
	// DPoP: see server.Config.
	DPoP bool
}

// Instance is a running server.
type Instance struct {
	URL    string // base URL
	IdPURL string
	Server *server.Server
	Store  store.Store

	http *http.Server
	idp  *devidp.Running
	stop context.CancelFunc // ends the invalidation listener
}

// Start starts the identity provider and the server.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Store == nil {
		opts.Store = memory.New()
	}
	if opts.TestClock != nil {
		opts.Clock = opts.TestClock
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("local: listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	idp, err := devidp.Start(ctx, "127.0.0.1:0", devidp.Config{
		Clock: opts.Clock, Logger: opts.Logger, RedirectURIs: []string{base + "/auth/callback"},
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("local: %w", err)
	}
	srv, err := server.New(ctx, server.Config{
		BaseURL: base, Store: opts.Store, Clock: opts.Clock, SigningKey: opts.SigningKey,
		PreviousSigningKeys: opts.PreviousSigningKeys, SealingKey: opts.SealingKey, PreviousSealingKeys: opts.PreviousSealingKeys,
		Logger: opts.Logger, Limits: opts.Limits, TrustedProxies: opts.TrustedProxies, CacheCredentials: opts.CacheCredentials, TestClock: opts.TestClock,
		MetadataDocuments: opts.MetadataDocuments, Metrics: opts.Metrics, RefreshReuseInterval: opts.RefreshReuseInterval,
		MachineClients: opts.MachineClients, DPoP: opts.DPoP,
		Login: server.LoginConfig{Issuer: idp.URL(), ClientID: idp.Provider().ClientID(), ClientSecret: idp.Provider().ClientSecret(), SubjectNamespace: devidp.SubjectNamespace},
	})
	if err != nil {
		ln.Close()
		idp.Close()
		return nil, fmt.Errorf("local: %w", err)
	}
	h := srv.Handler()
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	inst := &Instance{
		URL: base, IdPURL: idp.URL(), Server: srv, Store: opts.Store, idp: idp,
		http: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
	}
	var listenCtx context.Context
	listenCtx, inst.stop = context.WithCancel(context.WithoutCancel(ctx))
	go srv.RunInvalidations(listenCtx)
	go func() {
		if err := inst.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error("local: serve", "err", err)
		}
	}()
	return inst, nil
}

// Close stops both servers at once. It does not close the store.
func (i *Instance) Close() error {
	i.stop()
	return errors.Join(i.http.Close(), i.idp.Close())
}
