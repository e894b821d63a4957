// Package bench measures what authentication costs per request, as a ratio to
// a bare handler measured in the same run: the engine of `mcpauth bench`.
// Credentials and the measured OAuth requests go through package flows, the
// client the CLI is, so the benchmark loads the server the way clients do.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Options configure a run.
type Options struct {
	Target      string // remote base URL; empty: the in-process reference server
	Token       string // credential for a remote target
	DB          string // store of the in-process server; empty: SQLite in a temp dir
	Rounds      int
	Duration    time.Duration // load time per path per round
	Concurrency int
	// Codes is how many authorization codes are issued before each round
	// for the code exchange path; 0 means 1500.
	Codes int
	// Progress, when set, gets one line per step and per measurement.
	Progress func(format string, args ...any)
}

// Report is the result of a run, and its JSON form.
type Report struct {
	Machine     string     `json:"machine"`
	Cores       int        `json:"cores"`
	Target      string     `json:"target"`
	Rounds      int        `json:"rounds"`
	Concurrency int        `json:"concurrency"`
	Duration    string     `json:"duration_per_path"`
	Paths       []Summary  `json:"paths"`
	PerRound    [][]Result `json:"rounds_detail"`
}

// Summary is one path's medians over rounds.
type Summary struct {
	Name      string  `json:"name"`
	RPS       float64 `json:"rps"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	Errors    int     `json:"errors"`
	Ratio     float64 `json:"ratio"`
	Target    float64 `json:"target,omitempty"`
	MeetsGoal *bool   `json:"meets_target,omitempty"`
}

// path is one measured request kind.
type path struct {
	Name   string
	Target float64                         // the ratio the issue asks for (0: none)
	setup  func(ctx context.Context) error // before each round: e.g. pre-issue codes
	do     func(ctx context.Context) error // one request; errSpent when the supply is
}

// Run loads the bare baseline, then the target's paths, round after round,
// and summarises the medians.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
		return nil, errors.New("rounds, concurrency and duration must be positive")
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: opts.Concurrency * 2, MaxIdleConnsPerHost: opts.Concurrency * 2, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()

	baseURL, stop, err := startBaseline()
	if err != nil {
		return nil, err
	}
	defer stop()
	paths := []*path{{Name: "bare baseline", do: ping(client, baseURL, "")}}
	target := opts.Target
	if target == "" {
		var cleanup func()
		target, cleanup, err = startLocal(ctx, opts.DB, progress)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		lp, err := localPaths(ctx, target, client, storeName(opts.DB), opts.Codes, progress)
		if err != nil {
			return nil, err
		}
		paths = append(paths, lp...)
	} else {
		paths = append(paths, &path{Name: "ping (given token)", do: ping(client, target, opts.Token)})
	}

	rep := &Report{Machine: runtime.GOOS + "/" + runtime.GOARCH, Cores: runtime.NumCPU(), Target: target,
		Rounds: opts.Rounds, Concurrency: opts.Concurrency, Duration: opts.Duration.String()}
	for r := range opts.Rounds {
		var round []Result
		for _, p := range paths {
			if p.setup != nil {
				if err := p.setup(ctx); err != nil {
					return nil, fmt.Errorf("%s: preparing: %w", p.Name, err)
				}
			}
			res := load(ctx, opts.Concurrency, opts.Duration, p.do)
			res.Ratio = 1
			if len(round) > 0 && round[0].RPS > 0 {
				res.Ratio = res.RPS / round[0].RPS
			}
			progress("round %d/%d  %-28s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  errors %d  ratio %.2f",
				r+1, opts.Rounds, p.Name, res.RPS, ms(res.P50), ms(res.P99), res.Errors, res.Ratio)
			round = append(round, res)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		rep.PerRound = append(rep.PerRound, round)
	}
	for i, p := range paths {
		rep.Paths = append(rep.Paths, summarise(p, rep.PerRound, i))
	}
	return rep, nil
}

// summarise takes path i's medians over the rounds.
func summarise(p *path, rounds [][]Result, i int) Summary {
	var rps, p50, p99, ratio []float64
	s := Summary{Name: p.Name, Target: p.Target}
	for _, round := range rounds {
		res := round[i]
		rps, p50, p99, ratio = append(rps, res.RPS), append(p50, ms(res.P50)), append(p99, ms(res.P99)), append(ratio, res.Ratio)
		s.Errors += res.Errors
	}
	s.RPS, s.P50ms, s.P99ms, s.Ratio = median(rps), median(p50), median(p99), median(ratio)
	if p.Target > 0 {
		meets := s.Ratio >= p.Target
		s.MeetsGoal = &meets
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ping is GET /api/ping (with a bearer credential unless empty), wanting 200.
func ping(client *http.Client, base, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/ping", nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("ping: HTTP %d", resp.StatusCode)
		}
		return nil
	}
}

// startBaseline serves the same ping JSON with no authentication, on the
// same kind of listener, with the same response headers.
func startBaseline() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("baseline listener: %w", err)
	}
	body := []byte(`{"status":"ok","user_id":"u_baseline00000000"}` + "\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		h.Set("X-Request-Id", "0000000000000000")
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func startLocal(ctx context.Context, db string, progress func(string, ...any)) (string, func(), error) {
	dir, err := os.MkdirTemp("", "mcpauth-bench-")
	if err != nil {
		return "", nil, err
	}
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	st, err := sqlstore.Open(ctx, db)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("opening %s: %w", db, err)
	}
	inst, err := local.Start(ctx, local.Options{Store: st, Limits: server.Limits{Disabled: true}, CacheCredentials: !sqlstore.IsPostgres(db)})
	if err != nil {
		st.Close()
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("starting the reference server: %w", err)
	}
	progress("reference server on %s (SQLite %s, rate limits off)", inst.URL, db)
	return inst.URL, func() { inst.Close(); st.Close(); os.RemoveAll(dir) }, nil
}

func storeName(db string) string {
	if sqlstore.IsPostgres(db) {
		return "PostgreSQL"
	}
	return "SQLite"
}

// benchRedirect is registered and never listened on: the approver stops at
// the redirect.
const benchRedirect = "http://127.0.0.1:9/callback"

// localPaths obtains real credentials through flows (discovery, registration,
// the authorization code flow with the server's own pages as approver) and
// returns the measured paths of the reference server.
func localPaths(ctx context.Context, base string, client *http.Client, storeLabel string, codesPerRound int, progress func(string, ...any)) ([]*path, error) {
	approver, err := conformance.NewFormApprover(base, "bench", nil)
	if err != nil {
		return nil, err
	}
	apiKey, err := approver.APIKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API key from Settings: %w", err)
	}
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{HTTPClient: client}, base+"/mcp")
	if err != nil {
		return nil, err
	}
	ci, err := flows.Register(ctx, client, disc.AuthServer.RegistrationEndpoint, flows.ClientMetadata{
		ClientName: "mcpauth bench", RedirectURIs: []string{benchRedirect}, TokenEndpointAuthMethod: flows.AuthMethodNone,
		GrantTypes: []string{"authorization_code", flows.GrantTypeDeviceCode}, ResponseTypes: []string{"code"},
	})
	if err != nil {
		return nil, err
	}
	benchClient := flows.Client{ID: ci.ClientID, AuthMethod: flows.AuthMethodNone}
	authCfg := flows.AuthCodeConfig{HTTPClient: client, Discovery: disc, Client: benchClient}
	type grant struct {
		req  *flows.AuthRequest
		code string
	}
	issue := func(ctx context.Context) (grant, error) {
		req, err := authCfg.NewRequest(benchRedirect)
		if err != nil {
			return grant{}, err
		}
		code, err := authCfg.Authorize(ctx, req, approver.ApproveConsent)
		return grant{req, code}, err
	}
	g, err := issue(ctx)
	if err != nil {
		return nil, fmt.Errorf("authorizing: %w", err)
	}
	jwt, err := authCfg.Exchange(ctx, g.req, g.code)
	if err != nil {
		return nil, err
	}
	progress("credentials: a JWT from the authorization code flow, the API key from Settings")

	// Code exchanges consume codes: each round issues a fresh supply through
	// the real authorize path (consent form) before measuring.
	if codesPerRound <= 0 {
		codesPerRound = 1500
	}
	var grants []grant
	var next atomic.Int64
	exchangePath := &path{
		Name: "code exchange (" + storeLabel + ")", Target: 0.25,
		setup: func(ctx context.Context) error {
			grants = make([]grant, codesPerRound)
			next.Store(0)
			for i := range grants {
				g, err := issue(ctx)
				if err != nil {
					return err
				}
				grants[i] = g
			}
			return nil
		},
		do: func(ctx context.Context) error {
			i := int(next.Add(1) - 1)
			if i >= len(grants) {
				return errSpent
			}
			_, err := authCfg.Exchange(ctx, grants[i].req, grants[i].code)
			return err
		},
	}

	// Device-token polls rotate over many pending device codes, so each
	// poll is a real read-check-write of the device record.
	devCfg := flows.DeviceConfig{HTTPClient: client, Discovery: disc, Client: benchClient}
	var pending []*flows.DeviceAuthorization
	for range 256 {
		da, err := devCfg.Authorize(ctx)
		if err != nil {
			return nil, err
		}
		pending = append(pending, da)
	}
	var polled atomic.Int64
	pollPath := &path{
		Name: "device-token poll", Target: 0.50,
		do: func(ctx context.Context) error {
			_, _, err := devCfg.PollOnce(ctx, pending[int(polled.Add(1))%len(pending)], 0)
			// The expected answers while nobody approves.
			if flows.IsCode(err, "authorization_pending") || flows.IsCode(err, "slow_down") {
				return nil
			}
			return fmt.Errorf("want authorization_pending or slow_down, got %v", err)
		},
	}
	return []*path{
		{Name: "ping with JWT", Target: 0.90, do: ping(client, base, jwt.AccessToken)},
		{Name: "ping with API key (" + storeLabel + ")", Target: 0.90, do: ping(client, base, apiKey)},
		exchangePath,
		pollPath,
		{Name: "device code request", do: func(ctx context.Context) error {
			_, err := devCfg.Authorize(ctx)
			return err
		}},
	}, nil
}
