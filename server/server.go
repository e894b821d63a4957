// Package server is mcpauth's reference implementation of the service in
// docs/service.md: an MCP endpoint that is its own OAuth 2.0
// authorization server. New builds it from a Config; Handler serves it.
package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

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
	// PreviousSigningKeys still verify JWTs signed before a rotation but
	// never sign; keep one until its tokens have expired (24 hours).
	PreviousSigningKeys [][]byte
	// SealingKey encrypts API keys at rest: at least 32 bytes, unrelated to
	// SigningKey, so rotating the signing key does not touch stored keys.
	// When empty a random key is generated once and kept in the store.
	SealingKey []byte
	// PreviousSealingKeys still open API keys sealed before a rotation; New
	// re-seals those under SealingKey. API keys sealed by older versions
	// (under a key derived from the signing key or a previous one) are
	// opened and re-sealed the same way.
	PreviousSealingKeys [][]byte
	Logger              *slog.Logger
	// Login configures browser login through an OpenID Connect provider.
	Login LoginConfig
	// Limits are the rate limits; zero fields take the defaults.
	Limits Limits
	// TrustedProxies are the networks of the reverse proxies in front of the
	// server: from a peer in one of them, X-Forwarded-For and Forwarded name
	// the client that rate limits count (clientAddr). From any other peer,
	// and when empty, the peer is the client.
	TrustedProxies []netip.Prefix
	// AllowUnregisteredDeviceClients accepts any client_id at the device
	// endpoints (decisions.md; off by default).
	AllowUnregisteredDeviceClients bool
	// CacheCredentials keeps verified JWTs and API keys in memory (see
	// credentialCache). On a store other instances share (store.Shared),
	// the cache hears of their revocations and key changes through the
	// store's Watcher, which RunInvalidations runs; until it does, and
	// whenever it may have missed one, the cache answers nothing. Off, every
	// credential check reads the store (strict revocation).
	CacheCredentials bool
	// RefreshReuseInterval is how long after a rotation the spent refresh
	// token gets the same new pair again instead of revoking its family
	// (decisions.md "Refresh tokens"); 0, the default, is strict. At most
	// MaxRefreshReuseInterval.
	RefreshReuseInterval time.Duration
	// MetadataDocuments configures fetching Client ID Metadata Documents.
	MetadataDocuments MetadataDocumentConfig
	// Metrics, when set, records Prometheus metrics (see NewMetrics); nil
	// records nothing.
	Metrics *Metrics
	// MachineClients are confidential clients an operator registered for
	// the client credentials grant (LoadMachineClients); the grant is
	// served and advertised only when there are some.
	MachineClients []MachineClient
	// DPoP binds tokens to the key of a token request's DPoP proof (RFC
	// 9449) and says so in the resource's challenge and metadata; off,
	// proofs are ignored and every token is a Bearer token.
	DPoP bool
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
	reqLog    *LogHandler // the request line's fast path, when log is a LogHandler's
	tokens    *tokenService
	sealers   *sealers
	csrfKey   []byte
	userCodeK []byte
	cookieKey []byte
	login     *oidcLogin
	limits    *limiters
	proxies   trustedProxies
	metrics   *Metrics         // nil: no metrics
	cache     *credentialCache // nil unless Config.CacheCredentials
	watcher   store.Watcher    // other instances' changes for cache; nil if none write
	clients   clientCache
	grants    grantRegistry // what the token endpoint serves and the metadata advertises
	machines  map[string]MachineClient
	replays   *replayCache // client assertion and DPoP proof jti
	names     nameCache    // display names for ping and whoami
	cimd      *cimdFetcher
	pages     *pages.Renderer
	mcp       http.Handler
	handler   http.Handler

	// Bounds on metadata document fetching besides s.cimd's slots.
	cimdFailed  *failureCache      // documents that failed, for a while
	cimdFlights singleflight.Group // one fetch per URL at a time
}

// New validates cfg, fills defaults and builds the server.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is required")
	}
	if cfg.RefreshReuseInterval < 0 || cfg.RefreshReuseInterval > MaxRefreshReuseInterval {
		return nil, fmt.Errorf("server: the refresh reuse interval must be between 0 and %v, not %v", MaxRefreshReuseInterval, cfg.RefreshReuseInterval)
	}
	if err := checkMachineClients(cfg.MachineClients); err != nil {
		return nil, fmt.Errorf("server: machine clients: %w", err)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if err := checkIPv6Prefix(cfg.Limits.IPv6Prefix); err != nil {
		return nil, err
	}
	base, err := normalizeBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	proxies, err := newTrustedProxies(cfg.TrustedProxies)
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
	storeGiven := cfg.Store
	cfg.Store = cfg.Metrics.timeStore(cfg.Store)
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
		limits:    newLimiters(cfg.Limits, cfg.Clock, cfg.Metrics),
		proxies:   proxies,
		metrics:   cfg.Metrics,
		clients:   clientCache{m: map[string]store.Client{}},
		grants:    newGrantRegistry(),
		machines:  map[string]MachineClient{},
		replays:   newReplayCache(),
		cimd:      newCIMDFetcher(cfg.MetadataDocuments, cfg.Metrics.rejections(limiterCIMDSlots)),
	}
	for _, c := range cfg.MachineClients {
		s.machines[c.ID] = c
	}
	if len(s.machines) > 0 {
		s.grants = append(s.grants, machineGrants()...)
	}
	s.cimdFailed = newFailureCache(cfg.MetadataDocuments.FailureCache)
	s.reqLog, _ = cfg.Logger.Handler().(*LogHandler)
	if cfg.MetadataDocuments.AllowPrivateAddresses {
		cfg.Logger.Warn("client metadata documents may be fetched from loopback, private and link-local addresses (--cimd-allow-private): anyone who can reach this server can make it send requests into its network; local testing only")
	}
	s.tokens = newTokenService(key, base, s.resource, cfg.Clock, cfg.Store)
	if cfg.CacheCredentials {
		// Asked of the store as given, not through the metrics wrapper.
		if s.watcher = sharedWatcher(storeGiven); s.watcher != nil {
			s.cache = newSharedCache()
		} else {
			s.cache = newCredentialCache()
		}
	}
	if s.sealers, err = newSealersFor(ctx, cfg, key); err != nil {
		return nil, err
	}
	if len(cfg.PreviousSigningKeys) > 0 {
		if err := checkKeyLens("previous signing key", cfg.PreviousSigningKeys); err != nil {
			return nil, err
		}
		s.tokens.verifyAlso(cfg.PreviousSigningKeys)
	}
	if s.pages, err = pages.New(); err != nil {
		return nil, fmt.Errorf("server: loading pages: %w", err)
	}
	s.login = newOIDCLogin(cfg.Login, base+"/auth/callback", cfg.Clock)
	s.mcp = s.newMCPHandler()
	s.handler = s.routes()
	s.resealAPIKeys(ctx)
	return s, nil
}

// newSealersFor builds the API key sealers: the sealing key (configured, or
// generated and kept in the store under its own name) seals; the previous
// sealing keys, and the keys older versions derived from the signing key,
// only open.
func newSealersFor(ctx context.Context, cfg Config, signingKey []byte) (*sealers, error) {
	sk := cfg.SealingKey
	if len(sk) > 0 {
		if len(sk) < minSigningKeyLen {
			return nil, fmt.Errorf("server: sealing key is %d bytes; at least %d are required", len(sk), minSigningKeyLen)
		}
		if subtle.ConstantTimeCompare(sk, signingKey) == 1 {
			return nil, errors.New("server: the sealing key must differ from the signing key")
		}
	} else {
		var err error
		if sk, err = cfg.Store.GetOrCreateSecret(ctx, "api-key-sealing-key", random32); err != nil {
			return nil, fmt.Errorf("server: loading sealing key from store: %w", err)
		}
		if len(cfg.SigningKey) > 0 {
			// The signing key is kept out of the store, this one is not.
			cfg.Logger.Warn("no API key sealing key configured: using one kept in the database, so whoever reads the database can read every API key; configure a sealing key too")
		}
	}
	if err := checkKeyLens("previous sealing key", cfg.PreviousSealingKeys); err != nil {
		return nil, err
	}
	var previous [][]byte
	for _, k := range cfg.PreviousSealingKeys {
		previous = append(previous, deriveKey(k, "api key sealing"))
	}
	// How versions before separate sealing keys sealed: from the signing key.
	for _, k := range append([][]byte{signingKey}, cfg.PreviousSigningKeys...) {
		previous = append(previous, deriveKey(k, "api key seal"))
	}
	return newSealers(deriveKey(sk, "api key sealing"), previous)
}

func checkKeyLens(what string, keys [][]byte) error {
	for _, k := range keys {
		if len(k) < minSigningKeyLen {
			return fmt.Errorf("server: a %s is %d bytes; at least %d are required", what, len(k), minSigningKeyLen)
		}
	}
	return nil
}

func random32() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return b, nil
}

// resealAPIKeys moves every stored API key under the current sealing key,
// so previous keys can be dropped after one start. Failures are logged, not
// fatal: the keys still authenticate, and Settings re-seals on view.
func (s *Server) resealAPIKeys(ctx context.Context) {
	keys, err := s.store.ListAPIKeys(ctx)
	if err != nil {
		s.log.Error("listing api keys to re-seal", "err", err)
		return
	}
	resealed, unreadable := 0, 0
	for _, k := range keys {
		plain, stale, err := s.sealers.open(k.Sealed, k.UserID)
		switch {
		case err != nil:
			unreadable++
		case stale:
			if s.reseal(ctx, k, plain) {
				resealed++
			}
		}
	}
	if resealed > 0 {
		s.log.Info("api keys re-sealed under the current sealing key", "count", resealed)
	}
	if unreadable > 0 {
		s.log.Warn("api keys no configured sealing key opens: they still authenticate, and Settings offers their users a new key", "count", unreadable)
	}
}

// reseal stores plain sealed under the current key, unless the user has
// regenerated their key meanwhile.
func (s *Server) reseal(ctx context.Context, k store.APIKey, plain string) bool {
	sealed, err := s.sealers.seal(plain, k.UserID)
	if err == nil {
		err = s.store.ResealAPIKey(ctx, k.UserID, k.Hash, sealed)
	}
	if err != nil && !isNotFound(err) {
		s.log.Error("re-sealing an api key", "user_id", k.UserID, "err", err)
	}
	return err == nil
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
		return random32()
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
