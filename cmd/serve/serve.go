// Package serve implements `mcpauth serve`: the reference server.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/reach"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/devidp"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Options are serve's flags.
type Options struct {
	IO     *cmdutil.IOStreams
	Getenv func(string) string

	Addr                           string
	BaseURL                        string
	DB                             string
	SQLiteSync                     string // "normal" (the default when empty) or "full"
	PostgresMaxConns               int    // zero: sqlstore.DefaultPostgresMaxConns
	JWTKeyFile                     string
	JWTPreviousKeyFiles            []string
	SealingKeyFile                 string
	SealingPreviousKeyFiles        []string
	OIDCIssuer                     string
	OIDCClientID                   string
	OIDCClientSecret               string
	DevIdPAddr                     string
	TestClock                      bool
	Limits                         string
	NoRateLimits                   bool
	IPv6Prefix                     int      // bits of an IPv6 peer that make one caller for rate limits; 0: the server's 64
	TrustedProxies                 []string // CIDRs of reverse proxies whose X-Forwarded-For and Forwarded are believed
	AllowUnregisteredDeviceClients bool
	CIMDAllowPrivate               bool
	RefreshReuseInterval           time.Duration // 0: a spent refresh token always revokes its family
	// StrictRevocation reads the database on every credential check
	// instead of caching verified credentials.
	StrictRevocation bool
	LogFormat        string
	LogLevel         string
	// MetricsAddr, when set, serves Prometheus metrics at /metrics on a
	// listener of its own; off by default.
	MetricsAddr string
	// CIMDMaxFetches and CIMDFailureCache bound client metadata document
	// fetching (zero: the server's defaults, 8 and 60 s).
	CIMDMaxFetches   int
	CIMDFailureCache time.Duration
	// GCInterval is how often expired records are deleted (zero: a minute).
	GCInterval time.Duration
	// MachineClients is the JSON file of operator-registered machine
	// clients (server.LoadMachineClients); "" serves no client credentials.
	MachineClients string
	// DPoP binds tokens to the key of a DPoP proof (RFC 9449) when a
	// client sends one, and says so in the resource's challenge.
	DPoP bool

	// Server timeouts (documented in README): slow clients cannot hold
	// connections or goroutines for long.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration

	// Ready, when set, is called with the base URL once the server accepts
	// connections (tests use it instead of parsing output).
	Ready func(baseURL string)
}

// NewCmd builds the command; runF replaces the run function in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Getenv: f.Getenv}
	var oidcSecret *cmdutil.SecretFlag
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference server",
		Long: `Run the reference server: an MCP endpoint at {base_url}/mcp that is its own
OAuth 2.0 authorization server (discovery, dynamic registration, authorization
code + PKCE with consent, device flow, API keys, browser login).

With no --oidc-issuer, a development identity provider runs on its own
loopback port and asks for a user name: for local use only.

Every flag can also be set as an environment variable MCPAUTH_<FLAG>, e.g.
MCPAUTH_ADDR, MCPAUTH_DB; the keys themselves can be given as MCPAUTH_JWT_KEY,
MCPAUTH_SEALING_KEY, and comma-separated MCPAUTH_JWT_PREVIOUS_KEYS and
MCPAUTH_SEALING_PREVIOUS_KEYS.`,
		Example: `  mcpauth serve
  mcpauth serve --addr 127.0.0.1:9000 --db /var/lib/mcpauth/db.sqlite
  mcpauth serve --test-clock        # for mcpauth conformance --clock-url`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			// Before BindEnv, so a secret from a file or standard input
			// counts as given on the command line.
			if err := oidcSecret.Resolve(f.IO.In, nil); err != nil {
				return err
			}
			if opts.OIDCClientSecret != "" {
				_ = cmd.Flags().Set("oidc-client-secret", opts.OIDCClientSecret)
			}
			if err := cmdutil.BindEnv(cmd, f.Getenv); err != nil {
				return err
			}
			if opts.OIDCClientSecret == "" { // MCPAUTH_OIDC_CLIENT_SECRET_FILE
				return oidcSecret.Resolve(f.IO.In, nil)
			}
			return nil
		},
		RunE: cmdutil.RunE(opts, nil, runF, Run),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fl.StringVar(&opts.BaseURL, "base-url", "", "public base URL (default http://<addr>)")
	fl.StringVar(&opts.DB, "db", "", "SQLite file, :memory:, or a postgres:// URL (default <user data dir>/mcpauth/mcpauth.db)")
	fl.StringVar(&opts.SQLiteSync, "sqlite-sync", "normal", "when a SQLite commit counts as done: normal (it survives a crash of mcpauth) or full (it waits for the disk, and survives an OS crash or power loss too; slower)")
	fl.IntVar(&opts.PostgresMaxConns, "postgres-max-conns", sqlstore.DefaultPostgresMaxConns, "PostgreSQL connections this instance opens at most; requests beyond them wait for one (each instance also keeps one for notifications: keep instances × (this + 1) under the server's max_connections)")
	fl.StringVar(&opts.JWTKeyFile, "jwt-key-file", "", "file holding the JWT signing key, at least 32 bytes")
	fl.StringArrayVar(&opts.JWTPreviousKeyFiles, "jwt-previous-key-file", nil, "file holding a previous JWT key, still accepted to verify tokens (repeatable; or MCPAUTH_JWT_PREVIOUS_KEYS, comma-separated)")
	fl.StringVar(&opts.SealingKeyFile, "sealing-key-file", "", "file holding the key that encrypts stored API keys, at least 32 bytes (or MCPAUTH_SEALING_KEY)")
	fl.StringArrayVar(&opts.SealingPreviousKeyFiles, "sealing-previous-key-file", nil, "file holding a previous sealing key, to re-seal API keys under the current one (repeatable; or MCPAUTH_SEALING_PREVIOUS_KEYS, comma-separated)")
	fl.StringVar(&opts.OIDCIssuer, "oidc-issuer", "", "OpenID Connect issuer for browser login")
	fl.StringVar(&opts.OIDCClientID, "oidc-client-id", "", "client id at the OpenID Connect provider")
	oidcSecret = cmdutil.BindSecret(fl, &opts.OIDCClientSecret, "oidc-client-secret", "client secret at the OpenID Connect provider")
	fl.StringVar(&opts.DevIdPAddr, "dev-idp-addr", "127.0.0.1:0", "address of the development identity provider (without --oidc-issuer)")
	fl.BoolVar(&opts.TestClock, "test-clock", false, "expose /api/test/clock to move the server's time (loopback only; for conformance runs)")
	fl.StringVar(&opts.Limits, "limits", "", `rate limits as name=rate:burst, rate per second; names: device, authorize, register, usercode, cimd (e.g. "device=0.5:30,register=1:20")`)
	fl.BoolVar(&opts.NoRateLimits, "no-rate-limits", false, "turn rate limiting off (benchmarks only)")
	fl.IntVar(&opts.IPv6Prefix, "ipv6-prefix", server.DefaultIPv6Prefix, "rate limits count IPv6 callers by network of this many leading bits (32 to 128; 128 counts each address), since one host commonly has a whole /64")
	fl.StringSliceVar(&opts.TrustedProxies, "trusted-proxies", nil, "reverse proxies in front of the server, as CIDRs or addresses (comma-separated): from these peers only, X-Forwarded-For and Forwarded name the client that rate limits count")
	fl.BoolVar(&opts.AllowUnregisteredDeviceClients, "allow-unregistered-device-clients", false, "accept any client_id at the device endpoints")
	fl.BoolVar(&opts.CIMDAllowPrivate, "cimd-allow-private", false, "fetch client metadata documents from loopback and private addresses too (local testing only)")
	fl.IntVar(&opts.CIMDMaxFetches, "cimd-max-fetches", 8, "client metadata document fetches in flight across the server at most; a request that waits 2 s for one gets 503")
	fl.DurationVar(&opts.CIMDFailureCache, "cimd-failure-cache", time.Minute, "how long a client metadata document that could not be used is remembered, so naming it again fetches nothing")
	fl.DurationVar(&opts.RefreshReuseInterval, "refresh-reuse-interval", 0, "for this long after a rotation, a spent refresh token gets the same new pair again instead of revoking its family (at most 1m; 0 is strict)")
	fl.BoolVar(&opts.StrictRevocation, "strict-revocation", false, "check every API key and JWT in the database on every request instead of caching them; with PostgreSQL a revocation on another instance then needs no notification, at several times the cost of a request")
	fl.DurationVar(&opts.GCInterval, "gc-interval", time.Minute, "how often expired codes, tokens and unused clients are deleted from the database")
	fl.DurationVar(&opts.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "time a client has to send the request headers")
	fl.DurationVar(&opts.ReadTimeout, "read-timeout", 30*time.Second, "time a client has to send the whole request")
	fl.DurationVar(&opts.WriteTimeout, "write-timeout", 60*time.Second, "time to write a response (also caps MCP streams)")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection is kept")
	fl.StringVar(&opts.LogFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.StringVar(&opts.MachineClients, "machine-clients", "", `JSON file of machine clients for the client credentials grant: [{"client_id": …, "client_secret_file" | "client_secret_sha256" | "public_key_file": …}] (see docs/machines.md)`)
	fl.BoolVar(&opts.DPoP, "dpop", false, "issue DPoP-bound tokens (RFC 9449) to clients that send a proof, and advertise DPoP in the resource's challenge and metadata (clients that send none keep getting Bearer tokens)")
	fl.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9464 (off by default; never expose it publicly)")
	cmdutil.DocumentEnv(cmd)
	return cmd
}

// Run starts the server and blocks until SIGINT/SIGTERM or ctx ends.
func Run(ctx context.Context, opts *Options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The request log line of every request is batched: one write(2) per
	// 100 ms, not per request; Close writes out the rest on the way out.
	logOut := server.NewLogWriter(opts.IO.ErrOut, 100*time.Millisecond)
	defer logOut.Close()
	log, err := newLogger(opts, logOut)
	if err != nil {
		return err
	}
	// Zero means the documented default, so Options stays zero-value friendly.
	for _, t := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&opts.ReadHeaderTimeout, 10 * time.Second}, {&opts.ReadTimeout, 30 * time.Second}, {&opts.WriteTimeout, 60 * time.Second}, {&opts.IdleTimeout, 120 * time.Second},
		{&opts.GCInterval, time.Minute}} {
		switch {
		case *t.v < 0:
			return clierr.FlagErrorf("server timeouts and --gc-interval must be positive")
		case *t.v == 0:
			*t.v = t.def
		}
	}
	limits, err := parseLimits(opts.Limits)
	if err != nil {
		return clierr.FlagErrorf("--limits: %v", err)
	}
	limits.Disabled = opts.NoRateLimits
	limits.IPv6Prefix = opts.IPv6Prefix
	proxies, err := server.ParseTrustedProxies(opts.TrustedProxies)
	if err != nil {
		return clierr.FlagErrorf("--trusted-proxies: %v", err)
	}
	if opts.CIMDMaxFetches < 0 || opts.CIMDFailureCache < 0 {
		return clierr.FlagErrorf("--cimd-max-fetches and --cimd-failure-cache cannot be negative")
	}
	if err := checkExposure(opts); err != nil {
		return err
	}
	keys, err := readKeys(opts)
	if err != nil {
		return err
	}
	var machines []server.MachineClient
	if opts.MachineClients != "" {
		if machines, err = server.LoadMachineClients(opts.MachineClients); err != nil {
			return clierr.FlagErrorf("--machine-clients: %v", err)
		}
	}
	dsn, err := dbPath(opts.DB, opts.Getenv)
	if err != nil {
		return err
	}
	storeOpts, err := storeOptions(opts.SQLiteSync, opts.PostgresMaxConns, dsn)
	if err != nil {
		return err
	}
	if !sqlstore.IsPostgres(dsn) && dsn != ":memory:" {
		lock, err := lockDatabase(dsn)
		if err != nil {
			return err
		}
		defer lock.Close()
	}

	ln, err := listen("--addr", opts.Addr, opts.BaseURL)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := opts.BaseURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	base = strings.TrimSuffix(base, "/")

	st, err := sqlstore.OpenWith(ctx, dsn, storeOpts)
	if err != nil {
		return fmt.Errorf("opening database %s: %w", redactDSN(dsn), err)
	}
	defer st.Close()

	cfg := server.Config{
		BaseURL: base, Store: st, Logger: log, Limits: limits, TrustedProxies: proxies,
		SigningKey: keys.jwt, PreviousSigningKeys: keys.jwtPrevious,
		SealingKey: keys.sealing, PreviousSealingKeys: keys.sealingPrevious,
		AllowUnregisteredDeviceClients: opts.AllowUnregisteredDeviceClients,
		RefreshReuseInterval:           opts.RefreshReuseInterval,
		MachineClients:                 machines,
		DPoP:                           opts.DPoP,
		MetadataDocuments: server.MetadataDocumentConfig{
			AllowPrivateAddresses: opts.CIMDAllowPrivate, MaxFetches: opts.CIMDMaxFetches, FailureCache: opts.CIMDFailureCache,
		},
		// On SQLite the process's own writes are all; on PostgreSQL the
		// other instances' arrive by LISTEN/NOTIFY (RunInvalidations).
		CacheCredentials: !opts.StrictRevocation,
		Login:            server.LoginConfig{Issuer: opts.OIDCIssuer, ClientID: opts.OIDCClientID, ClientSecret: opts.OIDCClientSecret},
	}
	cfg.Clock = clock.Real{}
	if opts.TestClock {
		// The development IdP shares the test clock, so its id_tokens are
		// not "expired" to the server after a jump forward.
		cfg.TestClock = clock.NewSharedOffset(nil, st) // shared by instances on one database
		cfg.Clock = cfg.TestClock
		log.Warn("TEST CLOCK ENABLED: anyone who can reach this address can move the server's time via /api/test/clock; never use this in production")
	}
	if opts.OIDCIssuer == "" {
		idp, err := devidp.Start(ctx, opts.DevIdPAddr, devidp.Config{
			Clock: cfg.Clock, Logger: log.With("component", "dev-idp"), RedirectURIs: []string{base + "/auth/callback"},
		})
		if errors.Is(err, syscall.EADDRINUSE) {
			return clierr.WithExit(clierr.ExitFailure, fmt.Errorf("starting the development identity provider: %w: use another port, e.g. --dev-idp-addr 127.0.0.1:0 (any free port)", err))
		}
		if err != nil {
			return fmt.Errorf("starting the development identity provider: %w", err)
		}
		defer idp.Close()
		cfg.Login = server.LoginConfig{Issuer: idp.URL(), ClientID: idp.Provider().ClientID(), ClientSecret: idp.Provider().ClientSecret(), SubjectNamespace: devidp.SubjectNamespace}
		log.Warn("using the built-in DEVELOPMENT identity provider: anyone can sign in as any user name; configure --oidc-issuer for real use", "dev_idp", idp.URL())
	}
	metricsURL := ""
	if opts.MetricsAddr != "" {
		cfg.Metrics = server.NewMetrics()
		var stopMetrics func() error
		if metricsURL, stopMetrics, err = startMetrics(opts.MetricsAddr, cfg.Metrics, log); err != nil {
			return err
		}
		defer stopMetrics() //nolint:errcheck // exiting; closing a listener we own
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: opts.ReadHeaderTimeout, // slowloris: headers must arrive promptly
		ReadTimeout:       opts.ReadTimeout,       // whole request, body included (bodies are ≤ 1 MiB)
		WriteTimeout:      opts.WriteTimeout,      // caps MCP SSE streams too; clients reconnect
		IdleTimeout:       opts.IdleTimeout,       // keep-alive connections
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go srv.RunGC(ctx, opts.GCInterval)
	go srv.RunInvalidations(ctx)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	// Through logOut, after the warnings above, and out at once.
	fmt.Fprintf(logOut, "mcpauth reference server on %s\n  MCP endpoint: %s/mcp\n  sign in:      %s/auth/login\n  settings:     %s/settings\n", base, base, base, base)
	if metricsURL != "" {
		fmt.Fprintf(logOut, "  metrics:      %s\n", metricsURL)
	}
	_ = logOut.Flush()
	if opts.Ready != nil {
		opts.Ready(base)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// checkExposure refuses, before anything listens, the flags that would put
// a test-only facility within reach of other hosts.
func checkExposure(opts *Options) error {
	loopback := isLoopbackAddr(opts.Addr)
	if opts.TestClock && !loopback {
		return clierr.FlagErrorf("--test-clock is only allowed on a loopback address, not %s", opts.Addr)
	}
	if opts.TestClock && opts.BaseURL != "" && !isLoopbackURL(opts.BaseURL) {
		// Behind a proxy the listener is loopback but the clock is public.
		return clierr.FlagErrorf("--test-clock is only allowed with a loopback --base-url, not %s", opts.BaseURL)
	}
	if !loopback && opts.BaseURL == "" {
		// Off loopback the listen address is rarely what clients reach
		// (0.0.0.0, a container's address, behind a proxy), and the issuer
		// and resource URLs derived from it would be wrong for all of them.
		return clierr.FlagErrorf("--base-url (or MCPAUTH_BASE_URL) is required when --addr %s is not a loopback address: the public URL clients use, e.g. https://mcp.example.com", opts.Addr)
	}
	if opts.OIDCIssuer != "" {
		return nil
	}
	// The development identity provider lets anyone sign in as anyone: the
	// server, the provider itself and the URL browsers are sent to must all
	// stay on this machine.
	if !loopback {
		return clierr.FlagErrorf("the development identity provider lets anyone sign in as anyone: it only runs on a loopback --addr; configure --oidc-issuer for %s", opts.Addr)
	}
	if !isLoopbackAddr(opts.DevIdPAddr) {
		return clierr.FlagErrorf("the development identity provider lets anyone sign in as anyone: --dev-idp-addr must be a loopback address, not %s", opts.DevIdPAddr)
	}
	if opts.BaseURL != "" && !isLoopbackURL(opts.BaseURL) {
		return clierr.FlagErrorf("the development identity provider lets anyone sign in as anyone: it cannot serve the public --base-url %s; configure --oidc-issuer", opts.BaseURL)
	}
	return nil
}

func newLogger(opts *Options, out io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.LogLevel)); err != nil {
		return nil, clierr.FlagErrorf("--log-level: %v", err)
	}
	h, err := server.NewLogHandler(out, opts.LogFormat, level)
	if err != nil { // the only error: an unknown format
		return nil, clierr.FlagErrorf("--log-format must be text or json")
	}
	return slog.New(h), nil
}

// serverKeys are the configured keys; nil means generated and kept in the
// database.
type serverKeys struct {
	jwt, sealing                 []byte
	jwtPrevious, sealingPrevious [][]byte
}

// readKeys reads the keys from their files or environment variables.
func readKeys(opts *Options) (serverKeys, error) {
	var k serverKeys
	var err error
	if k.jwt, err = readKey(opts.JWTKeyFile, "--jwt-key-file", opts.Getenv("MCPAUTH_JWT_KEY"), "MCPAUTH_JWT_KEY"); err != nil {
		return k, err
	}
	if k.sealing, err = readKey(opts.SealingKeyFile, "--sealing-key-file", opts.Getenv("MCPAUTH_SEALING_KEY"), "MCPAUTH_SEALING_KEY"); err != nil {
		return k, err
	}
	if k.jwtPrevious, err = readKeyList(opts.JWTPreviousKeyFiles, "--jwt-previous-key-file", opts.Getenv("MCPAUTH_JWT_PREVIOUS_KEYS"), "MCPAUTH_JWT_PREVIOUS_KEYS"); err != nil {
		return k, err
	}
	if k.sealingPrevious, err = readKeyList(opts.SealingPreviousKeyFiles, "--sealing-previous-key-file", opts.Getenv("MCPAUTH_SEALING_PREVIOUS_KEYS"), "MCPAUTH_SEALING_PREVIOUS_KEYS"); err != nil {
		return k, err
	}
	// Configuring the JWT key says keys are kept out of the database; a
	// generated sealing key would put every API key back within reach of
	// anyone who reads it.
	if k.jwt != nil && k.sealing == nil {
		return k, clierr.FlagErrorf("a configured JWT key needs a configured sealing key too (--sealing-key-file or MCPAUTH_SEALING_KEY, e.g. openssl rand -base64 48); " +
			"API keys sealed by earlier versions are re-sealed under it at start")
	}
	if k.jwt != nil && subtle.ConstantTimeCompare(k.jwt, k.sealing) == 1 {
		return k, clierr.FlagErrorf("the sealing key must differ from the JWT key")
	}
	return k, nil
}

// readKey returns the key in file, else env's value, else nil.
func readKey(file, flag, env, envName string) ([]byte, error) {
	var key []byte
	from := flag
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", flag, err)
		}
		key = []byte(strings.TrimRight(string(b), "\r\n"))
	case env != "":
		key, from = []byte(env), envName
	default:
		return nil, nil
	}
	if len(key) < 32 {
		return nil, clierr.FlagErrorf("%s: the key is %d bytes; at least 32 are required (e.g. openssl rand -base64 48)", from, len(key))
	}
	return key, nil
}

// readKeyList reads the keys in files, then those in env (comma-separated).
func readKeyList(files []string, flag, env, envName string) ([][]byte, error) {
	var keys [][]byte
	for _, f := range files {
		k, err := readKey(f, flag, "", envName)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if env == "" {
		return keys, nil
	}
	for _, v := range strings.Split(env, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		k, err := readKey("", flag, v, envName)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func dbPath(db string, getenv func(string) string) (string, error) {
	if db != "" {
		return db, nil
	}
	dir := getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding a data directory (set --db): %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "mcpauth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	return filepath.Join(dir, "mcpauth.db"), nil
}

// storeOptions reads --sqlite-sync and --postgres-max-conns. Asking for
// full sync where there is no SQLite file to sync is refused rather than
// ignored: whoever asked for it believes their writes are safer than they
// would be.
func storeOptions(sync string, pgMaxConns int, dsn string) (sqlstore.Options, error) {
	full, err := sqlstore.ParseSQLiteSync(sync)
	switch {
	case pgMaxConns < 0:
		return sqlstore.Options{}, clierr.FlagErrorf("--postgres-max-conns cannot be negative (%d); 0 is the default, %d", pgMaxConns, sqlstore.DefaultPostgresMaxConns)
	case err != nil:
		return sqlstore.Options{}, clierr.FlagErrorf("--sqlite-sync: %v", err)
	case full && sqlstore.IsPostgres(dsn):
		return sqlstore.Options{}, clierr.FlagErrorf("--sqlite-sync full applies to SQLite only: on PostgreSQL, durability is the server's synchronous_commit")
	case full && dsn == ":memory:":
		return sqlstore.Options{}, clierr.FlagErrorf("--sqlite-sync full needs a database file: --db :memory: keeps nothing")
	}
	return sqlstore.Options{SQLiteFullSync: full, PostgresMaxConns: pgMaxConns}, nil
}

func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "@"); i >= 0 && strings.Contains(dsn, "://") {
		return dsn[:strings.Index(dsn, "://")+3] + "…" + dsn[i:]
	}
	return dsn
}

func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && reach.IsLoopback(host)
}

func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && reach.IsLoopback(u.Hostname())
}

func parseLimits(spec string) (server.Limits, error) {
	var l server.Limits
	if spec == "" {
		return l, nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		rs, bs, ok2 := strings.Cut(val, ":")
		if !ok || !ok2 {
			return l, fmt.Errorf("%q is not name=rate:burst", part)
		}
		rate, err1 := strconv.ParseFloat(rs, 64)
		burst, err2 := strconv.Atoi(bs)
		if err1 != nil || err2 != nil || rate <= 0 || burst <= 0 {
			return l, fmt.Errorf("%q: rate and burst must be positive numbers", part)
		}
		lim := server.Limit{Rate: rate, Burst: burst}
		switch name {
		case "device":
			l.DeviceCodePerIP = lim
		case "authorize":
			l.AuthorizePerClient = lim
		case "register":
			l.RegisterPerIP = lim
		case "usercode":
			l.WrongUserCodePerKey = lim
		case "cimd":
			l.MetadataFetchPerIP = lim
		default:
			return l, fmt.Errorf("unknown limit %q (device, authorize, register, usercode, cimd)", name)
		}
	}
	return l, nil
}
