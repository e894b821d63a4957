package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx", for freshPostgres
)

// collection is the garbage collection that deleted the expired flows, and
// the live polls and device code requests sent around it.
type collection struct {
	start, end time.Time // the window it ran in, as seen from here
	took       time.Duration
	polls      []timed
	writes     []timed
}

// gcSeries is the server's histogram of its store's GC, as --metrics-addr
// serves it.
const gcSeries = `mcpauth_store_operation_duration_seconds_%s{op="GC"} `

// watchCollection polls the live flows (livePoll) at opts.SampleRate and
// sends device code requests (write) at pendingWrites a second until the
// server's GC has deleted the expired flows, which it tells by a poll of
// expired flow firstExpired, answered "unknown" once its row is gone. The
// GC's duration is the server's own timing of it (its metrics).
func watchCollection(ctx context.Context, opts Options, metricsURL string, firstExpired int,
	livePoll func(context.Context) error, poll func(context.Context, int, ...string) error, write func(context.Context) error,
) (collection, error) {
	limit := 2*opts.GCInterval + 5*time.Minute
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var c collection
	polls, writes := make(chan []timed, 1), make(chan []timed, 1)
	go func() { polls <- openLoop(loadCtx, opts.SampleRate, limit, livePoll) }()
	go func() { writes <- openLoop(loadCtx, pendingWrites, limit, write) }()
	finish := func() {
		stopLoad()
		c.polls, c.writes = <-polls, <-writes
	}

	const every = 100 * time.Millisecond
	count, sum, err := gcMetrics(ctx, metricsURL)
	if err != nil {
		finish()
		return c, err
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := sleepUntil(ctx, time.Now().Add(every)); err != nil {
			finish()
			return c, err
		}
		n, s, err := gcMetrics(ctx, metricsURL)
		if err != nil {
			finish()
			return c, err
		}
		if n == count {
			continue
		}
		seen := time.Now()
		if poll(ctx, firstExpired, `"error":"invalid_grant"`) == nil {
			c.took = time.Duration((s - sum) * float64(time.Second))
			c.end, c.start = seen, seen.Add(-c.took-every) // it ended at most one scrape before it was seen
			// A second more of polls after it, then the results.
			_ = sleepUntil(ctx, time.Now().Add(time.Second))
			finish()
			return c, nil
		}
		count, sum = n, s
	}
	finish()
	return c, fmt.Errorf("the expired flows were not collected within %s (--gc-interval %s)", limit, opts.GCInterval)
}

// gcMetrics reads how many GCs the server ran and their total seconds.
func gcMetrics(ctx context.Context, metricsURL string) (count, sum float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("scraping the server's metrics: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("scraping the server's metrics: %w", err)
	}
	found := 0
	for line := range strings.Lines(string(b)) {
		for _, s := range []struct {
			suffix string
			v      *float64
		}{{"count", &count}, {"sum", &sum}} {
			if v, ok := strings.CutPrefix(line, fmt.Sprintf(gcSeries, s.suffix)); ok {
				if *s.v, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					return 0, 0, fmt.Errorf("the server's GC %s: %w", s.suffix, err)
				}
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("no GC histogram in the server's metrics at %s", metricsURL)
	}
	return count, sum, nil
}

// metricsURLFrom reads the metrics URL serve prints after its banner.
func metricsURLFrom(logFile string) (string, error) {
	const prefix = "metrics:"
	for range 50 {
		b, err := os.ReadFile(logFile)
		if err != nil {
			return "", err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), prefix); ok {
				return strings.TrimSpace(v), nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("serve printed no metrics URL in %s", logFile)
}

// pgFresh is a database created for one run beside the one a PostgreSQL
// URL names (which needs the right to create databases), dropped after.
type pgFresh struct {
	admin *sql.DB
	name  string
	url   string
}

func freshPostgres(ctx context.Context, base string) (*pgFresh, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("--postgres: %w", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, fmt.Errorf("--postgres: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "mcpauth_pending_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("creating a database for the run: %w", err)
	}
	u.Path = "/" + name
	return &pgFresh{admin: admin, name: name, url: u.String()}, nil
}

func (p *pgFresh) sizeMiB() (float64, error) {
	var size int64
	if err := p.admin.QueryRow("SELECT pg_database_size($1)", p.name).Scan(&size); err != nil {
		return 0, fmt.Errorf("the database's size: %w", err)
	}
	return float64(size) / (1 << 20), nil
}

func (p *pgFresh) drop() {
	_, _ = p.admin.Exec("DROP DATABASE IF EXISTS " + p.name + " WITH (FORCE)")
	p.admin.Close()
}
