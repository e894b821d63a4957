// Package server is mcpauth's reference implementation of the service in
// docs/service.md: an MCP endpoint that is its own OAuth 2.0
// authorization server. New builds it from a Config; Handler serves it.
package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// Config configures a Server. Only BaseURL and Store are required; the zero
// value of everything else is a sensible default.
type Config struct {
	// BaseURL is the service's public origin and path prefix, without a
	// trailing slash (e.g. http://127.0.0.1:8080). The issuer is BaseURL and
	// the protected resource BaseURL + "/mcp".
	BaseURL string
	Store   store.Store
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// SigningKey signs the HS256 JWTs: at least 32 bytes. When empty a random
	// key is generated once and kept in the store, with a warning.
	SigningKey []byte
	Logger     *slog.Logger
	// Login configures browser login through an OpenID Connect provider.
	Login LoginConfig
	// Limits are the rate limits; zero fields take the defaults.
	Limits Limits
	// AllowUnregisteredDeviceClients accepts any client_id at the device
	// endpoints (decisions.md; off by default).
	AllowUnregisteredDeviceClients bool
	// CacheCredentials keeps verified JWTs and API keys in memory (see
	// credentialCache). Only for a single instance: with several instances
	// on one database, another instance's key regeneration would not reach
	// this cache.
	CacheCredentials bool
	// TestClock, when set, is exposed at /api/test/clock so a conformance
	// suite in another process can move time. Never set it in production.
	TestClock *clock.Offset
}

// Server is the reference server.
type Server struct {
	cfg       Config
	baseURL   string
	resource  string
	store     store.Store
	clock     clock.Clock
	log       *slog.Logger
	tokens    *tokenService
	sealer    *sealer
	csrfKey   []byte
	userCodeK []byte
	cookieKey []byte
	login     *oidcLogin
	limits    *limiters
	cache     *credentialCache // nil unless Config.CacheCredentials
	clients   clientCache
	pages     *pages.Renderer
	mcp       http.Handler
	handler   http.Handler
}

// New validates cfg, fills defaults and builds the server.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is required")
	}
	base, err := normalizeBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.TestClock != nil {
		cfg.Clock = cfg.TestClock
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	key, err := signingKey(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		baseURL:   base,
		resource:  base + "/mcp",
		store:     cfg.Store,
		clock:     cfg.Clock,
		log:       cfg.Logger,
		csrfKey:   deriveKey(key, "csrf"),
		userCodeK: deriveKey(key, "user code"),
		cookieKey: deriveKey(key, "login cookie"),
		limits:    newLimiters(cfg.Limits.withDefaults(), cfg.Clock),
		clients:   clientCache{m: map[string]store.Client{}},
	}
	s.tokens = newTokenService(key, base, s.resource, cfg.Clock, cfg.Store)
	if cfg.CacheCredentials {
		s.cache = newCredentialCache()
	}
	if s.sealer, err = newSealer(deriveKey(key, "api key seal")); err != nil {
		return nil, err
	}
	if s.pages, err = pages.New(); err != nil {
		return nil, fmt.Errorf("server: loading pages: %w", err)
	}
	s.login = newOIDCLogin(cfg.Login, base+"/auth/callback", cfg.Clock)
	s.mcp = s.newMCPHandler()
	s.handler = s.routes()
	return s, nil
}

// signingKey returns the configured key, or the one kept in the store.
func signingKey(ctx context.Context, cfg Config) ([]byte, error) {
	if len(cfg.SigningKey) > 0 {
		if len(cfg.SigningKey) < minSigningKeyLen {
			return nil, fmt.Errorf("server: signing key is %d bytes; at least %d are required", len(cfg.SigningKey), minSigningKeyLen)
		}
		return cfg.SigningKey, nil
	}
	generated := false
	key, err := cfg.Store.GetOrCreateSecret(ctx, "jwt-signing-key", func() ([]byte, error) {
		generated = true
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("server: loading signing key from store: %w", err)
	}
	if generated {
		cfg.Logger.Warn("no JWT signing key configured: generated a random one and stored it in the database; several instances need the same configured key (--jwt-key-file or MCPAUTH_JWT_KEY)")
	}
	return key, nil
}

func normalizeBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("server: BaseURL %q must be an absolute http(s) URL", raw)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("server: BaseURL %q must use http or https", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("server: BaseURL %q must not have a query, fragment or user info", raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// BaseURL is the issuer URL.
func (s *Server) BaseURL() string { return s.baseURL }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// CollectGarbage deletes expired records once, using the server's clock.
func (s *Server) CollectGarbage(ctx context.Context) (int, error) {
	return s.store.GC(ctx, s.clock.Now())
}

// RunGC collects garbage every interval until ctx ends. The ticker only
// paces the work; what expired is decided by the server's clock.
func (s *Server) RunGC(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.CollectGarbage(ctx); err != nil {
				s.log.Error("garbage collection failed", "err", err)
			} else if n > 0 {
				s.log.Debug("garbage collected", "records", n)
			}
		}
	}
}
