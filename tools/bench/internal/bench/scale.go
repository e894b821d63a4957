package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// The scale mode: many device flows pending at once on one instance
// (`mcpauth serve` on SQLite, a child process), each polling the token
// endpoint at the interval the server gives, with jitter, as RFC 8628
// clients do. It measures poll latency and the child's resident memory.

// ScaleLimits raises serve's per-IP device code limit for the run: every
// flow comes from 127.0.0.1, where the default would refuse all but a few.
const ScaleLimits = "device=1000000:1000000"

// scaleConns bounds the load generator's connections to the server.
const scaleConns = 256

// ScaleResult is one run of the scale mode.
type ScaleResult struct {
	Flows      int     `json:"flows"`
	Duration   string  `json:"polling"`
	Polls      int     `json:"polls"`
	Errors     int     `json:"errors"`
	PollRate   float64 `json:"polls_per_s"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	RSSIdleMiB float64 `json:"rss_idle_mib"` // after start-up, no flows
	RSSPeakMiB float64 `json:"rss_peak_mib"` // highest sample while creating and polling
}

// RunScale runs the scale mode once per entry of opts.DeviceFlows, each on
// a fresh server, for opts.FlowDuration of polling.
func RunScale(ctx context.Context, opts Options) ([]ScaleResult, error) {
	if opts.Exe == "" {
		return nil, errors.New("the scale mode needs the mcpauth binary (Options.Exe)")
	}
	if opts.FlowDuration <= 0 {
		return nil, errors.New("the polling duration must be positive")
	}
	if opts.Progress == nil {
		opts.Progress = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "mcpauth-scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []ScaleResult
	for _, n := range opts.DeviceFlows {
		r, err := scaleOnce(ctx, opts, n, dir)
		if err != nil {
			return nil, fmt.Errorf("%d device flows: %w", n, err)
		}
		opts.Progress("%d device flows: %d polls (%.0f/s), p50 %.3f ms, p99 %.3f ms, %d errors, RSS %.1f MiB idle, %.1f MiB peak",
			n, r.Polls, r.PollRate, r.P50ms, r.P99ms, r.Errors, r.RSSIdleMiB, r.RSSPeakMiB)
		out = append(out, r)
	}
	return out, nil
}

func scaleOnce(ctx context.Context, opts Options, n int, dir string) (ScaleResult, error) {
	res := ScaleResult{Flows: n, Duration: opts.FlowDuration.String()}
	db := filepath.Join(dir, fmt.Sprintf("scale-%d.db", n))
	args := []string{"serve", "--addr", "127.0.0.1:0", "--dev-idp-addr", "127.0.0.1:0", "--db", db, "--limits", ScaleLimits}
	c, base, err := startChild(ctx, opts.Exe, args, filepath.Join(dir, fmt.Sprintf("serve-%d.log", n)), serveBanner, opts.ServerCPUs)
	if err != nil {
		return res, fmt.Errorf("reference server: %w", err)
	}
	defer c.stop()
	pid := c.cmd.Process.Pid
	if res.RSSIdleMiB, err = rssMiB(pid); err != nil {
		return res, err
	}
	// One transport for every flow, as one busy client host would have,
	// with a bounded number of connections, all kept alive: a connection
	// per flow would cost both sides a socket and its buffers per flow.
	client := scaleClient()
	defer client.CloseIdleConnections()

	peak := &rssPeak{pid: pid}
	stopSampling := peak.sample(250 * time.Millisecond)
	defer stopSampling()

	das, cfg, err := createFlows(ctx, client, base, n)
	if err != nil {
		return res, err
	}
	opts.Progress("%d device flows created; polling for %s", n, opts.FlowDuration)
	lat, errs := pollFlows(ctx, cfg, das, opts.FlowDuration)
	stopSampling()
	slices.Sort(lat)
	res.Polls, res.Errors = len(lat), errs
	res.PollRate = float64(len(lat)) / opts.FlowDuration.Seconds()
	res.P50ms, res.P99ms = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.99))
	res.RSSPeakMiB = peak.max()
	return res, peak.err()
}

// scaleClient is the scale modes' HTTP client: one transport with at most
// scaleConns connections, all kept alive.
func scaleClient() *http.Client {
	tr := &http.Transport{MaxConnsPerHost: scaleConns, MaxIdleConns: scaleConns, MaxIdleConnsPerHost: scaleConns, IdleConnTimeout: time.Minute}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// createFlows registers a client and starts n device authorizations.
func createFlows(ctx context.Context, client *http.Client, base string, n int) ([]*flows.DeviceAuthorization, flows.DeviceConfig, error) {
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{HTTPClient: client}, base+"/mcp")
	if err != nil {
		return nil, flows.DeviceConfig{}, err
	}
	ci, err := flows.Register(ctx, client, disc.AuthServer.RegistrationEndpoint, flows.ClientMetadata{
		ClientName: "mcpauth bench scale", TokenEndpointAuthMethod: flows.AuthMethodNone,
		GrantTypes: []string{flows.GrantTypeDeviceCode},
	})
	if err != nil {
		return nil, flows.DeviceConfig{}, err
	}
	cfg := flows.DeviceConfig{HTTPClient: client, Discovery: disc, Client: flows.Client{ID: ci.ClientID, AuthMethod: flows.AuthMethodNone}}
	das := make([]*flows.DeviceAuthorization, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				da, err := cfg.Authorize(ctx)
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("device code request %d: %w", i, err) })
					return
				}
				das[i] = da
			}
		})
	}
	wg.Wait()
	return das, cfg, firstErr
}

// pollFlows polls every flow at its interval for d, the first poll of each
// at a random point of its first interval, every wait stretched by up to
// 10 % (jitter, so flows created together do not poll together). Polls
// answered other than authorization_pending or slow_down count as errors.
func pollFlows(ctx context.Context, cfg flows.DeviceConfig, das []*flows.DeviceAuthorization, d time.Duration) ([]time.Duration, int) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	for _, da := range das {
		wg.Go(func() {
			interval := time.Duration(max(da.Interval, 1)) * time.Second
			wait := rand.N(interval)
			for {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				start := time.Now()
				_, next, err := cfg.PollOnce(ctx, da, interval)
				took := time.Since(start)
				if ctx.Err() != nil {
					return // cut short by the end of the run: not a sample
				}
				if !flows.IsCode(err, "authorization_pending") && !flows.IsCode(err, "slow_down") {
					errs.Add(1)
				}
				mu.Lock()
				lat = append(lat, took)
				mu.Unlock()
				interval = next
				wait = interval + rand.N(interval/10+1)
			}
		})
	}
	wg.Wait()
	return lat, int(errs.Load())
}

// rssPeak samples a process's resident set size.
type rssPeak struct {
	pid   int
	mu    sync.Mutex
	peak  float64
	first error
}

// sample reads the RSS every period until the returned stop is called
// (which may be called more than once).
func (p *rssPeak) sample(period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			p.read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-finished
		p.read()
	}
}

func (p *rssPeak) read() {
	v, err := rssMiB(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && p.first == nil {
		p.first = err
	}
	p.peak = max(p.peak, v)
}

func (p *rssPeak) max() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *rssPeak) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// rssMiB reads VmRSS from /proc/PID/status (Linux).
func rssMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the server's RSS: %w", err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmRSS %q: %w", v, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
