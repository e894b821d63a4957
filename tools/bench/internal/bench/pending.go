package bench

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// The pending mode: N device flows pending at once on one `mcpauth serve`
// (SQLite, or PostgreSQL), far more than the scale mode's polling clients
// can be on two cores. The flows are seeded into the database before the
// server starts (sqlstore.InsertDeviceCodes), not requested one by one at
// /api/oauth/device/code, whose transaction per code would take minutes
// for a million; the server then reads them as its own. A sample is polled,
// open loop, at SampleRate a second (uniformly over the N flows: each poll
// reads a row no recent poll touched), measuring latency and the server's
// RSS. The N flows were seeded to expire just after that, as if created
// 900 s before: the server's own garbage collection, on its real clock,
// deletes them, and meanwhile polls go on, at the same rate, to a few
// flows seeded to outlive it, with device code requests (writes) beside
// them. No test clock: `serve --test-clock` reads its shared offset from
// the database on every clock reading, a write each, which would weigh
// on every poll and wait behind the collection's own write.

// pendingLive is how many flows outlive the collection, polled while it
// runs: at 2,000 polls/s each is polled about every 5 s, as a real client.
const pendingLive = 10_000

// pendingWrites is the device code requests a second sent while the
// expired flows are collected.
const pendingWrites = 10

// seedChunk is how many flows one InsertDeviceCodes transaction seeds.
const seedChunk = 10_000

// PendingResult is one run of the pending mode.
type PendingResult struct {
	Store       string  `json:"store"`
	Flows       int     `json:"flows"`      // pending flows seeded, all expiring together
	Live        int     `json:"live_flows"` // seeded to outlive the collection
	SeedSeconds float64 `json:"seed_s"`
	DBMiB       float64 `json:"db_mib"` // the database's size after seeding
	// The sampled polls while all Flows were pending.
	Polls      int     `json:"polls"`
	Errors     int     `json:"errors"`
	PollRate   float64 `json:"polls_per_s"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	RSSIdleMiB float64 `json:"rss_idle_mib"` // after start-up on the seeded database
	RSSPeakMiB float64 `json:"rss_peak_mib"` // highest sample over the whole run
	// The collection of the expired Flows, as the server timed its store's
	// GC, and the live polls and device code requests due while it ran.
	GCms         float64 `json:"gc_ms"`
	GCPolls      int     `json:"gc_polls"`
	GCErrors     int     `json:"gc_errors"`
	GCP99ms      float64 `json:"gc_p99_ms"`
	GCMaxms      float64 `json:"gc_max_ms"`
	GCWrites     int     `json:"gc_writes"`
	GCWriteMaxms float64 `json:"gc_write_max_ms"`
	FirstError   string  `json:"first_error,omitempty"`
	// ServerError is the first error the server logged, if any.
	ServerError string `json:"server_error,omitempty"`
}

// RunPending runs the pending mode once per entry of opts.ScalePending on
// SQLite, then, with opts.Postgres, on PostgreSQL, each on a fresh
// database (on PostgreSQL one created beside opts.Postgres's and dropped
// after).
func RunPending(ctx context.Context, opts Options) ([]PendingResult, error) {
	if opts.Exe == "" {
		return nil, errors.New("the pending mode needs the mcpauth binary (Options.Exe)")
	}
	if opts.SampleRate < 1 || opts.SampleDuration <= 0 {
		return nil, errors.New("the sample rate and duration must be positive")
	}
	if opts.GCInterval <= 0 {
		opts.GCInterval = 10 * time.Second
	}
	if opts.Progress == nil {
		opts.Progress = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "mcpauth-pending-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	stores := []string{""}
	if opts.Postgres != "" {
		stores = append(stores, opts.Postgres)
	}
	var out []PendingResult
	for _, pg := range stores {
		for _, n := range opts.ScalePending {
			r, err := pendingOnce(ctx, opts, pg, n, dir)
			if err != nil {
				return out, fmt.Errorf("%s, %d pending flows: %w", storeName(pg), n, err)
			}
			opts.Progress("%s, %d pending flows: seeded in %.1f s (%.0f MiB); %d polls (%.0f/s) p50 %.3f ms p99 %.3f ms, %d errors; RSS %.1f MiB idle, %.1f peak; collected in %.1f ms, polls meanwhile p99 %.1f ms max %.1f ms, device code requests max %.1f ms",
				r.Store, n, r.SeedSeconds, r.DBMiB, r.Polls, r.PollRate, r.P50ms, r.P99ms, r.Errors, r.RSSIdleMiB, r.RSSPeakMiB,
				r.GCms, r.GCP99ms, r.GCMaxms, r.GCWriteMaxms)
			out = append(out, r)
		}
	}
	return out, nil
}

// pendingCodes names the seeded flows' device codes: flow i's is derived
// from a per-run prefix, so the bench keeps no million strings to poll them.
type pendingCodes struct {
	prefix   string
	clientID string
}

func (c pendingCodes) code(i int) string { return c.prefix + strconv.Itoa(i) }

// flow is flow i as stored: the hash the server looks a device code up by,
// and a user code hash that only has to be unique (nobody enters it), in
// the same order.
func (c pendingCodes) flow(i int, created, expires time.Time) store.DeviceCode {
	code := c.code(i)
	hash := sha256Hex(code)
	return store.DeviceCode{Hash: hash, UserCodeHash: "user-" + hash, ClientID: c.clientID, Scope: "",
		Status: store.DevicePending, Interval: server.DeviceInterval, CreatedAt: created, ExpiresAt: expires}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func pendingOnce(ctx context.Context, opts Options, pg string, n int, dir string) (res PendingResult, err error) {
	res = PendingResult{Store: storeName(pg), Flows: n, Live: min(n, pendingLive)}
	dsn := filepath.Join(dir, fmt.Sprintf("pending-%d.db", n))
	dbSize := func() (float64, error) { return fileMiB(dsn, dsn+"-wal") }
	if pg != "" {
		fresh, err := freshPostgres(ctx, pg)
		if err != nil {
			return res, err
		}
		defer fresh.drop()
		dsn, dbSize = fresh.url, fresh.sizeMiB
	}
	codes, expires, err := seedPending(ctx, opts, dsn, &res)
	if err != nil {
		return res, err
	}
	if res.DBMiB, err = dbSize(); err != nil {
		return res, err
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--dev-idp-addr", "127.0.0.1:0", "--db", dsn, "--limits", ScaleLimits,
		"--metrics-addr", "127.0.0.1:0", "--gc-interval", opts.GCInterval.String()}
	logFile := filepath.Join(dir, fmt.Sprintf("serve-%s-%d.log", res.Store, n))
	c, base, err := startChild(ctx, opts.Exe, args, logFile, serveBanner, opts.ServerCPUs)
	if err != nil {
		return res, fmt.Errorf("reference server: %w", err)
	}
	defer func() {
		c.stop()
		res.ServerError = firstLoggedError(logFile)
	}()
	metricsURL, err := metricsURLFrom(logFile)
	if err != nil {
		return res, err
	}
	pid := c.cmd.Process.Pid
	if res.RSSIdleMiB, err = rssMiB(pid); err != nil {
		return res, err
	}
	peak := &rssPeak{pid: pid}
	stopSampling := peak.sample(250 * time.Millisecond)
	defer stopSampling()

	client := scaleClient()
	defer client.CloseIdleConnections()
	disc, err := flows.Discover(ctx, flows.DiscoverConfig{HTTPClient: client}, base+"/mcp")
	if err != nil {
		return res, err
	}
	devCfg := flows.DeviceConfig{HTTPClient: client, Discovery: disc, Client: flows.Client{ID: codes.clientID, AuthMethod: flows.AuthMethodNone}}
	dialect, _, pollURL, err := devCfg.Endpoints()
	if err != nil {
		return res, err
	}
	poll := func(ctx context.Context, i int, markers ...string) error {
		ct, body := pollBody(dialect, codes.code(i), codes.clientID)
		return post(ctx, client, pollURL, ct, body, http.StatusBadRequest, markers...)
	}
	pending := func(lo, hi int) func(context.Context) error {
		return func(ctx context.Context) error {
			return poll(ctx, lo+mrand.IntN(hi-lo), `"error":"authorization_pending"`, `"error":"slow_down"`)
		}
	}

	// While every flow is pending: the sample, until shortly before they
	// expire.
	d := min(opts.SampleDuration, time.Until(expires)-500*time.Millisecond)
	if d < opts.SampleDuration/2 {
		return res, fmt.Errorf("seeding and start-up left %s of the %s of polling planned before the flows expire", d.Round(time.Millisecond), opts.SampleDuration)
	}
	opts.Progress("%s: %d flows pending; polling %d a second for %s", res.Store, n, opts.SampleRate, d.Round(time.Millisecond))
	start := time.Now()
	sampled := openLoop(ctx, opts.SampleRate, d, pending(res.Live, res.Live+n))
	lat, errs := latencies(sampled, func(timed) bool { return true })
	res.Polls, res.Errors = len(lat), errs
	res.PollRate = float64(len(lat)) / time.Since(start).Seconds()
	res.P50ms, res.P99ms = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.99))
	res.FirstError = firstError(sampled)

	if err := sleepUntil(ctx, expires.Add(50*time.Millisecond)); err != nil {
		return res, err
	}
	gc, err := watchCollection(ctx, opts, metricsURL, res.Live, pending(0, res.Live), poll, func(ctx context.Context) error {
		_, err := devCfg.Authorize(ctx)
		return err
	})
	if err != nil {
		return res, err
	}
	stopSampling()
	res.RSSPeakMiB = peak.max()
	res.GCms = ms(gc.took)
	during := func(r timed) bool { return !r.due.Before(gc.start) && !r.due.After(gc.end) }
	lat, res.GCErrors = latencies(gc.polls, during)
	res.GCPolls, res.GCP99ms = len(lat), ms(quantile(lat, 0.99))
	if len(lat) > 0 {
		res.GCMaxms = ms(lat[len(lat)-1])
	}
	wlat, _ := latencies(gc.writes, during)
	res.GCWrites = len(wlat)
	if len(wlat) > 0 {
		res.GCWriteMaxms = ms(wlat[len(wlat)-1])
	}
	if res.FirstError == "" {
		res.FirstError = firstError(gc.polls)
	}
	return res, peak.err()
}

// seedPending stores a device client and the flows: the live ones first,
// timing them to plan when the n others expire, far enough ahead for
// seeding them, starting the server and polling for SampleDuration.
func seedPending(ctx context.Context, opts Options, dsn string, res *PendingResult) (pendingCodes, time.Time, error) {
	st, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return pendingCodes{}, time.Time{}, err
	}
	defer st.Close()
	prefix := make([]byte, 12)
	_, _ = rand.Read(prefix)
	codes := pendingCodes{prefix: "bench-" + hex.EncodeToString(prefix) + "-", clientID: "bench-pending-" + hex.EncodeToString(prefix[:4])}
	now := time.Now()
	if err := st.CreateClient(ctx, store.Client{ID: codes.clientID, Name: "mcpauth bench pending", GrantTypes: []string{flows.GrantTypeDeviceCode},
		TokenEndpointAuthMethod: flows.AuthMethodNone, ApplicationType: "native", CreatedAt: now}); err != nil {
		return codes, time.Time{}, err
	}
	seed := func(lo, hi int, created, expires time.Time) error {
		// In the order of the hash, which the user code hash follows: every
		// index insert appends, so the rate stays flat as the table grows
		// (random keys slowed SQLite tenfold by a million rows).
		order := make([]int, hi-lo)
		hashes := make([]string, hi-lo)
		for i := range order {
			order[i], hashes[i] = lo+i, sha256Hex(codes.code(lo+i))
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(hashes[a-lo], hashes[b-lo]) })
		hashes = nil
		batch := make([]store.DeviceCode, 0, seedChunk)
		for i := lo; i < hi; i += seedChunk {
			batch = batch[:0]
			for _, j := range order[i-lo : min(i+seedChunk, hi)-lo] {
				batch = append(batch, codes.flow(j, created, expires))
			}
			if err := st.InsertDeviceCodes(ctx, batch); err != nil {
				return err
			}
			if done := min(i+seedChunk, hi) - lo; done%100_000 == 0 {
				opts.Progress("seeded %d flows", done)
			}
		}
		return nil
	}
	if err := seed(0, res.Live, now, now.Add(time.Hour)); err != nil {
		return codes, time.Time{}, fmt.Errorf("seeding: %w", err)
	}
	perFlow := time.Since(now) / time.Duration(max(res.Live, 1))
	// Three times the rate so far (the indexes grow, the machine is
	// shared), and a few seconds for the server to start.
	expires := time.Now().Add(3*perFlow*time.Duration(res.Flows) + 5*time.Second + opts.SampleDuration)
	if err := seed(res.Live, res.Live+res.Flows, expires.Add(-server.DeviceCodeLifetime), expires); err != nil {
		return codes, time.Time{}, fmt.Errorf("seeding: %w", err)
	}
	res.SeedSeconds = time.Since(now).Seconds()
	return codes, expires, nil
}

// firstLoggedError is the first line serve logged at level ERROR, which
// names what failed (serve logs no secrets).
func firstLoggedError(logFile string) string {
	b, _ := os.ReadFile(logFile)
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "level=ERROR") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func firstError(rs []timed) string {
	for _, r := range rs {
		if r.err != nil {
			return r.err.Error()
		}
	}
	return ""
}

func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// fileMiB is the total size of the files that exist among names.
func fileMiB(names ...string) (float64, error) {
	var total int64
	for _, name := range names {
		fi, err := os.Stat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		total += fi.Size()
	}
	return float64(total) / (1 << 20), nil
}
