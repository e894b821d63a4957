// Package servertest starts a complete reference server for tests: the
// server on a loopback httptest listener, the development identity provider
// on another (so the login redirect crosses origins as in production), a
// store and a fake clock. Other packages' tests (CLI, conformance) use it to
// run against the real thing rather than a mock.
package servertest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Options adjusts the environment; the zero value is a memory store, a fake
// clock at a fixed date and default limits.
type Options struct {
	Store  store.Store
	Clock  *clock.Fake
	Limits server.Limits
	// TrustedProxies: see server.Config.
	TrustedProxies []netip.Prefix
	// Wrap, when set, wraps the server's handler (fault injection in tests).
	Wrap func(http.Handler) http.Handler
	// SigningKey, when set, is the JWT key (else one is kept in the store).
	SigningKey []byte
	// PreviousSigningKeys, SealingKey, PreviousSealingKeys: see server.Config.
	PreviousSigningKeys [][]byte
	SealingKey          []byte
	PreviousSealingKeys [][]byte
	// CacheCredentials turns on the in-process credential cache.
	CacheCredentials bool
	// RefreshReuseInterval: see server.Config.
	RefreshReuseInterval time.Duration
	// Verbose sends the server's logs to stderr.
	Verbose bool
	// Logger, when set, receives the server's logs (and Verbose is ignored).
	Logger *slog.Logger
	// MetadataDocuments configures fetching client metadata documents
	// (tests relax the address guard to reach a loopback document server).
	MetadataDocuments server.MetadataDocumentConfig
	// Metrics, when set, records the server's metrics (the test serves them).
	Metrics *server.Metrics
	// Addr is the server's listen address (default 127.0.0.1:0).
	Addr string
	// MachineClients: see server.Config.
	MachineClients []server.MachineClient
	// DPoP: see server.Config.
	DPoP bool
}

// Env is a running reference server.
type Env struct {
	URL      string // base URL, e.g. http://127.0.0.1:41234
	IdPURL   string
	Server   *server.Server
	Store    store.Store
	Clock    *clock.Fake
	Instance *local.Instance
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
	if opts.MetadataDocuments.LookupIP == nil {
		// Tests (fuzzers among them) may send any https client_id: resolve
		// nothing but loopback literals, so no test reaches another host.
		opts.MetadataDocuments.LookupIP = LoopbackLiteralsOnly
	}
	logger := slog.New(slog.DiscardHandler)
	if opts.Verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Logger != nil {
		logger = opts.Logger
	}
	inst, err := local.Start(context.Background(), local.Options{
		Addr: opts.Addr, Store: opts.Store, Clock: opts.Clock, Limits: opts.Limits, TrustedProxies: opts.TrustedProxies,
		SigningKey: opts.SigningKey, PreviousSigningKeys: opts.PreviousSigningKeys,
		SealingKey: opts.SealingKey, PreviousSealingKeys: opts.PreviousSealingKeys, Logger: logger, Wrap: opts.Wrap, CacheCredentials: opts.CacheCredentials,
		MetadataDocuments: opts.MetadataDocuments, Metrics: opts.Metrics, RefreshReuseInterval: opts.RefreshReuseInterval,
		MachineClients: opts.MachineClients, DPoP: opts.DPoP,
	})
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() { inst.Close() })
	return &Env{URL: inst.URL, IdPURL: inst.IdPURL, Server: inst.Server, Store: opts.Store, Clock: opts.Clock, Instance: inst}
}

// LoopbackLiteralsOnly is a resolver for metadata document fetches in tests:
// 127.0.0.1 and ::1 (in any spelling) resolve to themselves, everything
// else fails without asking DNS.
func LoopbackLiteralsOnly(_ context.Context, host string) ([]netip.Addr, error) {
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return nil, fmt.Errorf("servertest: %q does not resolve in tests (only loopback IP literals do)", host)
	}
	return []netip.Addr{ip}, nil
}
