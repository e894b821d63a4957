// Package bench measures what authentication costs per request, as a ratio to
// a bare handler measured in the same run: the engine of tools/bench, a
// development tool kept out of the mcpauth binary.
// Credentials and the measured OAuth requests go through package flows, the
// client the CLI is, so the benchmark loads the server the way clients do.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Options configure a run.
type Options struct {
	Target string // remote base URL; empty: the in-process reference server
	Token  string // credential for a remote target
	DB     string // store of the in-process server; empty: SQLite in a temp dir
	// SQLiteFullSync runs the reference server on SQLite with every commit
	// synced to disk (serve --sqlite-sync full).
	SQLiteFullSync bool
	// Postgres, a postgres:// URL, adds a run of the first mode against
	// the reference server on that database: its report follows the
	// first, with Store "PostgreSQL".
	Postgres string
	// DeviceFlows, for RunScale: how many device flows poll at once, one
	// run per entry; FlowDuration: how long they poll.
	DeviceFlows  []int
	FlowDuration time.Duration
	// ScalePending, for RunPending: how many pending device flows are
	// seeded, one run per entry and store; SampleRate polls a second,
	// sampled from them, for SampleDuration; GCInterval is the server's
	// --gc-interval (zero: 10 s).
	ScalePending   []int
	SampleRate     int
	SampleDuration time.Duration
	GCInterval     time.Duration
	Rounds         int
	Duration       time.Duration // load time per path per round
	Concurrency    int
	// Codes is how many authorization codes are issued before each slice
	// for the code exchange path; 0 means 1500.
	Codes int
	// Progress, when set, gets one line per step and per measurement.
	Progress func(format string, args ...any)
	// Exe is the mcpauth binary under test, run as `serve` in
	// out-of-process mode and by RunScale.
	Exe string
	// Baseline is the binary that serves the bare baseline when run with
	// BaselineArg (tools/bench itself): the baseline is no part of mcpauth.
	// Out-of-process mode needs it, and Exe unless Target is set.
	Baseline string
	// Modes to run, one report each; empty: out-of-process then in-process
	// when out-of-process has the binaries it needs, in-process alone
	// otherwise.
	Modes []Mode
	// ServerCPUs and LoadCPUs pin, in out-of-process mode on Linux, the
	// server processes (the baseline and the reference server) and this
	// process, the load generator. Empty: no pinning.
	ServerCPUs, LoadCPUs []int
	// Only, when set, keeps the paths whose name contains it (and the
	// baseline): a quicker run while working on one path.
	Only string
}

// Mode is where the measured servers run.
type Mode string

const (
	// OutOfProcess runs the baseline and the reference server as child
	// processes, the load generator alone in this one.
	OutOfProcess Mode = "out-of-process"
	// InProcess runs everything in this process and Go runtime.
	InProcess Mode = "in-process"
)

// ParseMode reads a --mode value.
func ParseMode(s string) ([]Mode, error) {
	switch s {
	case "", "both":
		return nil, nil
	case "out", string(OutOfProcess):
		return []Mode{OutOfProcess}, nil
	case "in", string(InProcess):
		return []Mode{InProcess}, nil
	}
	return nil, fmt.Errorf("unknown mode %q (out-of-process, in-process or both)", s)
}

// Report is the result of a run, and its JSON form.
type Report struct {
	Mode        Mode       `json:"mode"`
	Store       string     `json:"store,omitempty"`
	SQLiteSync  string     `json:"sqlite_sync,omitempty"` // "normal" or "full" when Store is SQLite
	Pinning     string     `json:"pinning,omitempty"`
	Machine     string     `json:"machine"`
	Cores       int        `json:"cores"`
	Target      string     `json:"target"`
	Rounds      int        `json:"rounds"`
	Concurrency int        `json:"concurrency"`
	Duration    string     `json:"duration_per_path"`
	Paths       []Summary  `json:"paths"`
	PerRound    [][]Result `json:"rounds_detail"`
	// Scale holds RunScale's results when they were measured in the same run.
	Scale []ScaleResult `json:"device_flows,omitempty"`
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
	setup  func(ctx context.Context) error // before each of its slices: e.g. pre-issue codes
	do     func(ctx context.Context) error // one request; errSpent when the supply is
}

// Run measures in each of opts.Modes, one report per mode, in that order.
func Run(ctx context.Context, opts Options) ([]*Report, error) {
	if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
		return nil, errors.New("rounds, concurrency and duration must be positive")
	}
	if opts.Progress == nil {
		opts.Progress = func(string, ...any) {}
	}
	modes := opts.Modes
	if len(modes) == 0 {
		modes = []Mode{InProcess}
		if opts.Baseline != "" && (opts.Exe != "" || opts.Target != "") {
			modes = []Mode{OutOfProcess, InProcess}
		}
	}
	type run struct {
		mode Mode
		db   string
	}
	runs := []run{{modes[0], opts.DB}}
	if opts.Postgres != "" && opts.Target == "" {
		runs = append(runs, run{modes[0], opts.Postgres})
	}
	for _, m := range modes[1:] {
		runs = append(runs, run{m, opts.DB})
	}
	var reps []*Report
	for _, r := range runs {
		opts.Progress("mode: %s, %s", r.mode, storeName(r.db))
		o := opts
		o.DB = r.db
		rep, err := runMode(ctx, o, r.mode)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", r.mode, storeName(r.db), err)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// runMode loads the bare baseline, then the target's paths, round after
// round, and summarises the medians.
func runMode(ctx context.Context, opts Options, mode Mode) (*Report, error) {
	progress := opts.Progress
	if mode == OutOfProcess && (opts.Baseline == "" || opts.Exe == "" && opts.Target == "") {
		return nil, errNoExe
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: opts.Concurrency * 2, MaxIdleConnsPerHost: opts.Concurrency * 2, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()
	dir, err := os.MkdirTemp("", "mcpauth-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var serverCPUs []int
	pinning := ""
	if mode == OutOfProcess && (len(opts.ServerCPUs) > 0 || len(opts.LoadCPUs) > 0) {
		serverCPUs = opts.ServerCPUs
		if err := pinSelf(opts.LoadCPUs); err != nil {
			return nil, fmt.Errorf("pinning the load generator: %w", err)
		}
		defer func() { _ = pinSelf(nil) }()
		pinning = fmt.Sprintf("servers on CPUs %s, load generator on CPUs %s", cpuList(opts.ServerCPUs), cpuList(opts.LoadCPUs))
		progress("pinning: %s", pinning)
	}

	var baseURL string
	if mode == OutOfProcess {
		c, u, err := startChild(ctx, opts.Baseline, []string{BaselineArg}, filepath.Join(dir, "baseline.log"), BaselineBanner, serverCPUs)
		if err != nil {
			return nil, fmt.Errorf("bare baseline: %w", err)
		}
		defer c.stop()
		baseURL = u
		progress("bare baseline: child process %d on %s", c.cmd.Process.Pid, u)
	} else {
		u, stop, err := startBaseline()
		if err != nil {
			return nil, err
		}
		defer stop()
		baseURL = u
	}
	paths := []*path{{Name: "bare baseline", do: ping(client, baseURL, "")}}
	target := opts.Target
	var variants []variant
	if target == "" {
		if mode == OutOfProcess {
			db := opts.DB
			if db == "" {
				db = filepath.Join(dir, "bench.db")
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--dev-idp-addr", "127.0.0.1:0", "--db", db, "--no-rate-limits"}
			if sqliteSync(opts) == "full" {
				args = append(args, "--sqlite-sync", "full")
			}
			c, u, err := startChild(ctx, opts.Exe, args, filepath.Join(dir, "serve.log"), serveBanner, serverCPUs)
			if err != nil {
				return nil, fmt.Errorf("reference server: %w", err)
			}
			defer c.stop()
			target = u
			progress("reference server: child process %d (mcpauth serve, %s, rate limits off, logging as deployed) on %s", c.cmd.Process.Pid, storeName(opts.DB), u)
			if sqlstore.IsPostgres(db) {
				// A second instance on the same database (the keys it
				// generated are shared there), and one that reads the
				// database on every credential check.
				for _, v := range []struct {
					label, log string
					flags      []string
				}{{"two instances, round-robin", "serve2.log", nil}, {"--strict-revocation", "strict.log", []string{"--strict-revocation"}}} {
					// The same public URL, so the first one's JWTs are theirs
					// too; its banner then names that URL, not its address.
					addr, err := freeLoopbackAddr()
					if err != nil {
						return nil, err
					}
					u2 := "http://" + addr
					more := append(slices.Clone(args), append([]string{"--addr", addr, "--base-url", u}, v.flags...)...)
					c2, _, err := startChild(ctx, opts.Exe, more, filepath.Join(dir, v.log), serveBanner, serverCPUs)
					if err != nil {
						return nil, fmt.Errorf("reference server (%s): %w", v.label, err)
					}
					defer c2.stop()
					bases := []string{u2}
					if v.flags == nil {
						bases = []string{u, u2}
					}
					variants = append(variants, variant{label: v.label, bases: bases})
					progress("reference server (%s): child process %d on %s", v.label, c2.cmd.Process.Pid, u2)
				}
			}
		} else {
			var cleanup func()
			target, cleanup, err = startLocal(ctx, opts.DB, dir, sqliteSync(opts) == "full", progress)
			if err != nil {
				return nil, err
			}
			defer cleanup()
		}
		lp, err := localPaths(ctx, target, baseURL, client, storeName(opts.DB), opts.Codes, variants, progress)
		if err != nil {
			return nil, err
		}
		for _, p := range lp {
			if opts.Only == "" || strings.Contains(p.Name, opts.Only) {
				paths = append(paths, p)
			}
		}
	} else {
		paths = append(paths, &path{Name: "ping (given token)", do: ping(client, target, opts.Token)})
	}

	rep := &Report{Mode: mode, Store: storeName(opts.DB), SQLiteSync: sqliteSync(opts), Pinning: pinning, Machine: runtime.GOOS + "/" + runtime.GOARCH, Cores: runtime.NumCPU(), Target: target,
		Rounds: opts.Rounds, Concurrency: opts.Concurrency, Duration: opts.Duration.String()}
	// Each path is measured in slices alternating with slices of the
	// baseline (B P P B B P …), and its ratio is to the baseline of its own
	// slices: on a machine whose load drifts (other processes), both sides
	// of each ratio see the same conditions.
	nSlices := max(1, int(opts.Duration/(250*time.Millisecond)))
	slice := opts.Duration / time.Duration(nSlices)
	for r := range opts.Rounds {
		round := make([]Result, len(paths))
		var baseAll []Result
		for i, p := range paths {
			if i == 0 {
				continue
			}
			var bs, ps []Result
			for k := range nSlices {
				order := []*path{paths[0], p}
				if k%2 == 1 {
					order[0], order[1] = p, paths[0]
				}
				for _, q := range order {
					if q.setup != nil {
						if err := q.setup(ctx); err != nil {
							return nil, fmt.Errorf("%s: preparing: %w", q.Name, err)
						}
					}
					res := load(ctx, opts.Concurrency, slice, q.do)
					if q == p {
						ps = append(ps, res)
					} else {
						bs = append(bs, res)
					}
				}
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
			res, b := merge(ps), merge(bs)
			baseAll = append(baseAll, bs...)
			if b.RPS > 0 {
				res.Ratio = res.RPS / b.RPS
			}
			progress("round %d/%d  %-28s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  errors %d  ratio %.2f (baseline of its slices %.0f req/s)",
				r+1, opts.Rounds, p.Name, res.RPS, ms(res.P50), ms(res.P99), res.Errors, res.Ratio, b.RPS)
			round[i] = res
		}
		round[0] = merge(baseAll)
		round[0].Ratio = 1
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

// post is one request of a load generator as cheap as ping's (wrk-like: a
// body made beforehand, the answer read and checked for its status and one
// of the markers), so that a path's ratio measures the server, not a client
// library's parsing. The paths' answers are checked in full by the tests.
func post(ctx context.Context, client *http.Client, url, contentType, body string, status int, markers ...string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode == status {
		for _, m := range markers {
			if strings.Contains(string(got), m) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: HTTP %d, want %d with one of %q: %.200s", url, resp.StatusCode, status, markers, got)
}

func startLocal(ctx context.Context, db, dir string, fullSync bool, progress func(string, ...any)) (string, func(), error) {
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	st, err := sqlstore.OpenWith(ctx, db, sqlstore.Options{SQLiteFullSync: fullSync})
	if err != nil {
		return "", nil, fmt.Errorf("opening %s: %w", db, err)
	}
	inst, err := local.Start(ctx, local.Options{Store: st, Limits: server.Limits{Disabled: true}, CacheCredentials: true})
	if err != nil {
		st.Close()
		return "", nil, fmt.Errorf("starting the reference server: %w", err)
	}
	progress("reference server on %s (%s, rate limits off)", inst.URL, storeName(db))
	return inst.URL, func() { inst.Close(); st.Close() }, nil
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "all"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}

func storeName(db string) string {
	if sqlstore.IsPostgres(db) {
		return "PostgreSQL"
	}
	return "SQLite"
}

// sqliteSync names the reference server's SQLite commit durability, or is
// empty for PostgreSQL and a remote target: the one place that decides
// whether SQLiteFullSync applies to a run.
func sqliteSync(opts Options) string {
	switch {
	case opts.Target != "" || sqlstore.IsPostgres(opts.DB):
		return ""
	case opts.SQLiteFullSync:
		return "full"
	}
	return "normal"
}

// storeTargets are the targets by store (issue 16 for SQLite, "several
// instances in production" for PostgreSQL): a
// PostgreSQL write is a network round trip and a server-side commit.
var storeTargets = map[string]struct{ ping, exchange, poll float64 }{
	"SQLite":     {ping: 0.90, exchange: 0.35, poll: 0.60},
	"PostgreSQL": {ping: 0.80, exchange: 0.20, poll: 0.40}, // "several instances in production"
}

// benchRedirect is registered and never listened on: the approver stops at
// the redirect.
const benchRedirect = "http://127.0.0.1:9/callback"

// localPaths obtains real credentials through flows (discovery, registration,
// the authorization code flow with the server's own pages as approver) and
// returns the measured paths of the reference server.
// variant is more instances of the reference server on the same database,
// whose pings are measured too with the same credentials: requests go to
// bases in turn.
type variant struct {
	label string
	bases []string
}

func localPaths(ctx context.Context, base, bareURL string, client *http.Client, storeLabel string, codesPerSlice int, variants []variant, progress func(string, ...any)) ([]*path, error) {
	targets := storeTargets[storeLabel]
	approver, err := approve.NewFormApprover(base, "bench", nil)
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
	issue := func(ctx context.Context, a *approve.FormApprover) (grant, error) {
		req, err := authCfg.NewRequest(benchRedirect)
		if err != nil {
			return grant{}, err
		}
		code, err := authCfg.Authorize(ctx, req, a.ApproveConsent)
		return grant{req, code}, err
	}
	g, err := issue(ctx, approver)
	if err != nil {
		return nil, fmt.Errorf("authorizing: %w", err)
	}
	jwt, err := authCfg.Exchange(ctx, g.req, g.code)
	if err != nil {
		return nil, err
	}
	progress("credentials: a JWT from the authorization code flow, the API key from Settings")

	// Code exchanges consume codes: a fresh supply is issued through the
	// real authorize path (consent form) before each slice, enough to last
	// it at ~16,000 exchanges a second, so a slice measures exchanges for its
	// whole length rather than a burst that ends when the codes do.
	if codesPerSlice <= 0 {
		codesPerSlice = 4000
	}
	// The bodies are encoded beforehand, as wrk would send them: encoding
	// url.Values in the load generator, which shares the cores, would lower
	// the ratio for a reason outside the server.
	// An approver takes one consent at a time: several, each with a session
	// of its own, issue a slice's supply in a fraction of the time.
	issuers := []*approve.FormApprover{approver}
	for len(issuers) < 8 {
		a, err := approve.NewFormApprover(base, "bench", nil)
		if err != nil {
			return nil, err
		}
		issuers = append(issuers, a)
	}
	var exchangeBodies []string
	var next atomic.Int64
	exchangePath := &path{
		Name: "code exchange (" + storeLabel + ")", Target: targets.exchange,
		setup: func(ctx context.Context) error {
			exchangeBodies = make([]string, codesPerSlice)
			next.Store(0)
			var issued atomic.Int64
			g, ctx := errgroup.WithContext(ctx)
			for _, a := range issuers {
				g.Go(func() error {
					for i := int(issued.Add(1) - 1); i < len(exchangeBodies); i = int(issued.Add(1) - 1) {
						gr, err := issue(ctx, a)
						if err != nil {
							return err
						}
						form := url.Values{"grant_type": {"authorization_code"}, "code": {gr.code}, "redirect_uri": {gr.req.RedirectURI},
							"client_id": {benchClient.ID}, "code_verifier": {gr.req.Verifier}}
						if gr.req.Resource != "" {
							form.Set("resource", gr.req.Resource)
						}
						exchangeBodies[i] = form.Encode()
					}
					return nil
				})
			}
			return g.Wait()
		},
		do: func(ctx context.Context) error {
			i := int(next.Add(1) - 1)
			if i >= len(exchangeBodies) {
				return errSpent
			}
			return post(ctx, client, disc.AuthServer.TokenEndpoint, "application/x-www-form-urlencoded", exchangeBodies[i],
				http.StatusOK, `"access_token":"`)
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
	dialect, _, pollURL, err := devCfg.Endpoints()
	if err != nil {
		return nil, err
	}
	var pollType string
	pollBodies := make([]string, len(pending))
	for i, da := range pending {
		pollType, pollBodies[i] = pollBody(dialect, da.DeviceCode, benchClient.ID)
	}
	var polled atomic.Int64
	pollPath := &path{
		Name: "device-token poll", Target: targets.poll,
		do: func(ctx context.Context) error {
			// The expected answer while nobody approves: authorization_pending
			// (or slow_down, both error responses with status 400).
			return post(ctx, client, pollURL, pollType, pollBodies[int(polled.Add(1))%len(pollBodies)],
				http.StatusBadRequest, `"error":"authorization_pending"`, `"error":"slow_down"`)
		},
	}
	paths := []*path{
		// The bare handler sent the JWT's ~300-byte header, which it ignores:
		// how much of the JWT path's cost is the size of its request alone.
		{Name: "bare, with the JWT header", do: ping(client, bareURL, jwt.AccessToken)},
		{Name: "ping with JWT", Target: targets.ping, do: ping(client, base, jwt.AccessToken)},
		{Name: "ping with API key (" + storeLabel + ")", Target: targets.ping, do: ping(client, base, apiKey)},
		exchangePath,
		pollPath,
		{Name: "device code request", do: func(ctx context.Context) error {
			_, err := devCfg.Authorize(ctx)
			return err
		}},
	}
	for _, v := range variants {
		paths = append(paths,
			&path{Name: "ping with JWT, " + v.label, do: pingAcross(client, v.bases, jwt.AccessToken)},
			&path{Name: "ping with API key, " + v.label, do: pingAcross(client, v.bases, apiKey)})
	}
	return paths, nil
}

// pingAcross pings bases in turn, as a round-robin load balancer would.
func pingAcross(client *http.Client, bases []string, token string) func(context.Context) error {
	pings := make([]func(context.Context) error, len(bases))
	for i, b := range bases {
		pings[i] = ping(client, b, token)
	}
	var n atomic.Uint64
	return func(ctx context.Context) error { return pings[n.Add(1)%uint64(len(pings))](ctx) }
}

// freeLoopbackAddr names a loopback port free just now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// pollBody is a device-token poll's content type and body in dialect.
func pollBody(dialect flows.Dialect, deviceCode, clientID string) (contentType, body string) {
	if dialect == flows.DialectJSON {
		b, _ := json.Marshal(map[string]string{"device_code": deviceCode, "client_id": clientID, "grant_type": flows.GrantTypeDeviceCode})
		return "application/json", string(b)
	}
	return "application/x-www-form-urlencoded", url.Values{"device_code": {deviceCode}, "client_id": {clientID}, "grant_type": {flows.GrantTypeDeviceCode}}.Encode()
}
