// Package bench implements `mcpauth bench`: what the auth layer costs per
// request, as a ratio to a bare handler measured in the same run.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// Options are bench's flags.
type Options struct {
	IO          *cmdutil.IOStreams
	Target      string // remote base URL; empty: in-process reference server
	Token       string // for a remote target
	DB          string
	Rounds      int
	Duration    time.Duration
	Concurrency int
	JSON        string // file for the JSON report ("-": stdout)
	Markdown    string
	Chart       string
}

// NewCmd builds the command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO}
	var token *cmdutil.SecretFlag
	cmd := &cobra.Command{
		Use:   "bench [<base-url>]",
		Short: "Measure what authentication costs per request, against a bare handler",
		Long: `Load, one after another and for several rounds: a bare net/http handler
(the baseline), GET /api/ping with a JWT, with an API key, code exchanges at
/oauth/token, device-token polls and device code requests. For each: requests
per second, p50, p99, errors and the ratio to the baseline of the same round;
the report gives medians over rounds. Only ratios are comparable across
machines.

Without an argument it runs the reference server in-process on loopback
(SQLite in a temp dir, or --db) and obtains real credentials through the real
flows. With a base URL and --token it measures only the ping paths of that
deployment (the baseline still runs locally).`,
		Example: `  mcpauth bench
  mcpauth bench --rounds 5 --json bench.json
  mcpauth bench --markdown BENCHMARKS.md --chart BENCHMARKS.png
  mcpauth token | mcpauth bench https://mcp.example.com --token -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := token.Resolve(f.IO.In, f.Getenv); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Target = strings.TrimSuffix(args[0], "/")
				if opts.Token == "" {
					return cmdutil.FlagErrorf("a remote target needs --token (a JWT or API key)")
				}
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	token = cmdutil.BindSecret(fl, &opts.Token, "token", "credential for a remote target")
	fl.StringVar(&opts.DB, "db", "", "SQLite file for the in-process server (default: a temp dir)")
	fl.IntVar(&opts.Rounds, "rounds", 3, "rounds; each loads every path once")
	fl.DurationVar(&opts.Duration, "duration", 2*time.Second, "load time per path per round")
	fl.IntVar(&opts.Concurrency, "concurrency", 16, "closed-loop workers (keep-alive connections)")
	fl.StringVar(&opts.JSON, "json", "", "write the JSON report to this file (- for stdout)")
	fl.StringVar(&opts.Markdown, "markdown", "", "write a BENCHMARKS.md-style report to this file")
	fl.StringVar(&opts.Chart, "chart", "", "write a PNG bar chart of the ratios to this file")
	return cmd
}

// path is one measured request kind.
type path struct {
	Name   string
	Target float64                                // the ratio the issue asks for (0: none)
	setup  func(ctx context.Context, n int) error // before each round: e.g. pre-issue codes
	next   func() *http.Request
	ok     func(*http.Response) bool
}

// Report is the JSON report.
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

// Run benchmarks.
func Run(ctx context.Context, opts *Options) error {
	if opts.Rounds < 1 || opts.Concurrency < 1 || opts.Duration <= 0 {
		return cmdutil.FlagErrorf("--rounds, --concurrency and --duration must be positive")
	}
	progress := func(format string, args ...any) { fmt.Fprintf(opts.IO.ErrOut, format+"\n", args...) }
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: opts.Concurrency * 2, MaxIdleConnsPerHost: opts.Concurrency * 2, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()

	baseURL, stop, err := startBaseline()
	if err != nil {
		return err
	}
	defer stop()
	paths := []*path{{
		Name: "bare baseline",
		next: func() *http.Request { return get(baseURL+"/api/ping", "") },
		ok:   status(200),
	}}
	target := opts.Target
	if target == "" {
		var cleanup func()
		target, cleanup, err = startLocal(ctx, opts, progress)
		if err != nil {
			return err
		}
		defer cleanup()
		lp, err := localPaths(ctx, target, client, storeName(opts.DB), progress)
		if err != nil {
			return err
		}
		paths = append(paths, lp...)
	} else {
		paths = append(paths, &path{Name: "ping (given token)", next: func() *http.Request { return get(target+"/api/ping", opts.Token) }, ok: status(200)})
	}

	rep := Report{Machine: runtime.GOOS + "/" + runtime.GOARCH, Cores: runtime.NumCPU(), Target: target,
		Rounds: opts.Rounds, Concurrency: opts.Concurrency, Duration: opts.Duration.String()}
	for r := range opts.Rounds {
		var round []Result
		for _, p := range paths {
			if p.setup != nil {
				if err := p.setup(ctx, 0); err != nil {
					return fmt.Errorf("%s: preparing: %w", p.Name, err)
				}
			}
			res := load(ctx, client, opts.Concurrency, opts.Duration, p.next, p.ok)
			if len(round) > 0 && round[0].RPS > 0 {
				res.Ratio = res.RPS / round[0].RPS
			} else {
				res.Ratio = 1
			}
			progress("round %d/%d  %-28s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  errors %d  ratio %.2f",
				r+1, opts.Rounds, p.Name, res.RPS, ms(res.P50), ms(res.P99), res.Errors, res.Ratio)
			round = append(round, res)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		rep.PerRound = append(rep.PerRound, round)
	}
	for i, p := range paths {
		var rps, p50, p99, ratio []float64
		s := Summary{Name: p.Name, Target: p.Target}
		for _, round := range rep.PerRound {
			res := round[i]
			rps, p50, p99, ratio = append(rps, res.RPS), append(p50, ms(res.P50)), append(p99, ms(res.P99)), append(ratio, res.Ratio)
			s.Errors += res.Errors
		}
		s.RPS, s.P50ms, s.P99ms, s.Ratio = median(rps), median(p50), median(p99), median(ratio)
		if p.Target > 0 {
			meets := s.Ratio >= p.Target
			s.MeetsGoal = &meets
		}
		rep.Paths = append(rep.Paths, s)
	}
	return writeOutputs(opts, &rep)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func status(code int) func(*http.Response) bool {
	return func(r *http.Response) bool { return r.StatusCode == code }
}

func get(u, token string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// startBaseline serves the same ping JSON with no authentication, on the
// same kind of listener, with the same response headers.
func startBaseline() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
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

func startLocal(ctx context.Context, opts *Options, progress func(string, ...any)) (string, func(), error) {
	dir, err := os.MkdirTemp("", "mcpauth-bench-")
	if err != nil {
		return "", nil, err
	}
	db := opts.DB
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	st, err := sqlstore.Open(ctx, db)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	inst, err := local.Start(ctx, local.Options{Store: st, Limits: server.Limits{Disabled: true}, CacheCredentials: !sqlstore.IsPostgres(db)})
	if err != nil {
		st.Close()
		os.RemoveAll(dir)
		return "", nil, err
	}
	progress("reference server on %s (SQLite %s, rate limits off)", inst.URL, db)
	return inst.URL, func() { inst.Close(); st.Close(); os.RemoveAll(dir) }, nil
}

// localPaths obtains real credentials through the real flows and returns
// the measured paths of the reference server.
func localPaths(ctx context.Context, base string, client *http.Client, storeLabel string, progress func(string, ...any)) ([]*path, error) {
	approver, err := conformance.NewFormApprover(base, "bench", nil)
	if err != nil {
		return nil, err
	}
	apiKey, err := approver.APIKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API key from Settings: %w", err)
	}
	clientID, err := registerClient(ctx, client, base)
	if err != nil {
		return nil, err
	}
	verifier, _ := pkce.NewVerifier()
	issueCode := func(ctx context.Context) (string, error) {
		authURL := base + "/oauth/authorize?" + url.Values{
			"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {benchRedirect}, "state": {"bench"},
			"code_challenge": {pkce.S256(verifier)}, "code_challenge_method": {"S256"},
		}.Encode()
		back, err := approver.ApproveConsent(ctx, authURL)
		if err != nil {
			return "", err
		}
		return back.Query().Get("code"), nil
	}
	code, err := issueCode(ctx)
	if err != nil {
		return nil, fmt.Errorf("authorizing: %w", err)
	}
	jwt, err := exchange(ctx, client, base, clientID, code, verifier)
	if err != nil {
		return nil, err
	}
	progress("credentials: a JWT from the authorization code flow, the API key from Settings")

	// Code exchanges consume codes: each round issues a fresh supply through
	// the real authorize path (consent form) before measuring.
	var codes []string
	var codeIdx atomic.Int64
	const codesPerRound = 1500
	exchangePath := &path{
		Name: "code exchange (" + storeLabel + ")", Target: 0.25,
		setup: func(ctx context.Context, _ int) error {
			codes = make([]string, codesPerRound)
			codeIdx.Store(0)
			for i := range codes {
				c, err := issueCode(ctx)
				if err != nil {
					return err
				}
				codes[i] = c
			}
			return nil
		},
		next: func() *http.Request {
			i := codeIdx.Add(1) - 1
			if int(i) >= len(codes) {
				return nil
			}
			return postForm(base+"/oauth/token", url.Values{
				"grant_type": {"authorization_code"}, "code": {codes[i]}, "redirect_uri": {benchRedirect},
				"client_id": {clientID}, "code_verifier": {verifier},
			})
		},
		ok: status(200),
	}

	// Device-token polls rotate over many pending device codes, so each
	// poll is a real read-check-write of the device record.
	var deviceCodes []string
	for range 256 {
		dc, err := deviceCode(ctx, client, base, clientID)
		if err != nil {
			return nil, err
		}
		deviceCodes = append(deviceCodes, dc)
	}
	var pollIdx atomic.Int64
	pollPath := &path{
		Name: "device-token poll", Target: 0.50,
		next: func() *http.Request {
			dc := deviceCodes[int(pollIdx.Add(1))%len(deviceCodes)]
			return postJSON(base+"/api/oauth/device/token", fmt.Sprintf(`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":%q,"client_id":%q}`, dc, clientID))
		},
		// authorization_pending or slow_down: the expected answers while nobody approves.
		ok: status(400),
	}
	return []*path{
		{Name: "ping with JWT", Target: 0.90, next: func() *http.Request { return get(base+"/api/ping", jwt) }, ok: status(200)},
		{Name: "ping with API key (" + storeLabel + ")", Target: 0.90, next: func() *http.Request { return get(base+"/api/ping", apiKey) }, ok: status(200)},
		exchangePath,
		pollPath,
		{Name: "device code request", next: func() *http.Request {
			return postJSON(base+"/api/oauth/device/code", fmt.Sprintf(`{"client_id":%q}`, clientID))
		}, ok: status(200)},
	}, nil
}

func storeName(db string) string {
	if sqlstore.IsPostgres(db) {
		return "PostgreSQL"
	}
	return "SQLite"
}

const benchRedirect = "http://127.0.0.1:9/bench"

func postForm(u string, v url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func postJSON(u, body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func doJSON(ctx context.Context, client *http.Client, req *http.Request, want int, v any) error {
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d", req.Method, req.URL.Path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func registerClient(ctx context.Context, client *http.Client, base string) (string, error) {
	var out struct {
		ClientID string `json:"client_id"`
	}
	err := doJSON(ctx, client, postJSON(base+"/oauth/register", `{"client_name":"mcpauth bench","redirect_uris":["`+benchRedirect+`"],"grant_types":["authorization_code","urn:ietf:params:oauth:grant-type:device_code"]}`), 201, &out)
	return out.ClientID, err
}

func exchange(ctx context.Context, client *http.Client, base, clientID, code, verifier string) (string, error) {
	var out struct {
		AccessToken string `json:"access_token"`
	}
	err := doJSON(ctx, client, postForm(base+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {benchRedirect},
		"client_id": {clientID}, "code_verifier": {verifier},
	}), 200, &out)
	if err == nil && out.AccessToken == "" {
		err = errors.New("token response without access_token")
	}
	return out.AccessToken, err
}

func deviceCode(ctx context.Context, client *http.Client, base, clientID string) (string, error) {
	var out struct {
		DeviceCode string `json:"device_code"`
	}
	err := doJSON(ctx, client, postJSON(base+"/api/oauth/device/code", fmt.Sprintf(`{"client_id":%q}`, clientID)), 200, &out)
	return out.DeviceCode, err
}
