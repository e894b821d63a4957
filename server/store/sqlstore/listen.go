package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpauth/mcpauth/server/store"
)

// invalidationChannel is the LISTEN/NOTIFY channel the triggers of
// migrations 8 and 9 notify on, in the writing transaction: "j<exp ms>
// <jti>" for a revoked token, "k<user id>" for an API key set or removed,
// "d<hash>" for a device code changed other than in its pacing, "d" for
// device codes deleted.
const invalidationChannel = "mcpauth_invalidate"

// Heartbeat timing of the listener. A connection that dies silently (a
// network partition, no reset) is noticed within heartbeatIdle +
// heartbeatTimeout: the listener waits at most heartbeatIdle for a
// notification, then proves the connection still answers within
// heartbeatTimeout. That sum bounds how long a cache can trust a dead
// connection (docs/server.md "Several instances").
const (
	heartbeatIdle    = 500 * time.Millisecond
	heartbeatTimeout = time.Second
	// reconnectDelay spaces connection attempts while PostgreSQL is away;
	// meanwhile every credential check reads the database.
	reconnectDelay = 250 * time.Millisecond
)

// watcher listens on a dedicated connection, outside the pool.
type watcher struct {
	dsn string
	// devices is the store's device rows, kept in step here: the server's
	// handler hears of credentials only.
	devices          *rowCache
	idle, timeout    time.Duration
	retry            time.Duration
	pid              atomic.Uint32 // the listening backend's, for tests that cut it
	dialAddrOverride string        // tests: connect here instead (a proxy they can cut)
}

// Invalidations returns the PostgreSQL listener, or nil for SQLite: one
// process writes a SQLite file, so its own writes are all its cache needs.
func (s *Store) Invalidations() store.Watcher {
	if s.watch == nil {
		return nil
	}
	return s.watch
}

func newWatcher(dsn string, devices *rowCache) *watcher {
	return &watcher{dsn: dsn, devices: devices, idle: heartbeatIdle, timeout: heartbeatTimeout, retry: reconnectDelay}
}

// withDevices passes on to the handler what it hears of, and keeps the
// store's device rows in step: trusted while, and only while, the
// handler's cache is.
type withDevices struct {
	store.InvalidationHandler
	devices *rowCache
}

func (h withDevices) Unsynced(cause error) {
	h.devices.unsync()
	h.InvalidationHandler.Unsynced(cause)
}

func (h withDevices) Resynced() {
	h.devices.resync()
	h.InvalidationHandler.Resynced()
}

// WatchInvalidations implements store.Watcher.
func (w *watcher) WatchInvalidations(ctx context.Context, h store.InvalidationHandler) error {
	cfg, err := pgx.ParseConfig(w.dsn)
	if err != nil {
		return fmt.Errorf("invalidation listener: %w", err)
	}
	// Named, so an operator (or a test) can find it in pg_stat_activity.
	cfg.RuntimeParams["application_name"] = "mcpauth-invalidations-" + strconv.Itoa(os.Getpid())
	if w.dialAddrOverride != "" {
		host, port, _ := strings.Cut(w.dialAddrOverride, ":")
		p, _ := strconv.Atoi(port)
		cfg.Host, cfg.Port, cfg.Fallbacks = host, uint16(p), nil
	}
	dh := withDevices{h, w.devices}
	dh.Unsynced(errors.New("not listening yet"))
	for {
		err := w.listen(ctx, cfg, dh)
		if ctx.Err() != nil {
			return nil
		}
		dh.Unsynced(err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.retry):
		}
	}
}

// listen connects, LISTENs, reports the cache synced and delivers
// notifications until the connection fails.
func (w *watcher) listen(ctx context.Context, cfg *pgx.ConnConfig, h withDevices) error {
	cctx, cancel := context.WithTimeout(ctx, 5*w.timeout)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("invalidation listener: connecting: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), w.timeout)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	w.pid.Store(conn.PgConn().PID())
	lctx, cancel := context.WithTimeout(ctx, w.timeout)
	_, err = conn.Exec(lctx, "LISTEN "+invalidationChannel)
	cancel()
	if err != nil {
		return fmt.Errorf("invalidation listener: LISTEN: %w", err)
	}
	// Listening from here: whatever commits later is delivered, and what
	// committed before is in the database for any lookup that starts now.
	h.Resynced()
	for {
		wctx, cancel := context.WithTimeout(ctx, w.idle)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			deliver(n.Payload, h)
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if !pgconn.Timeout(err) {
			return fmt.Errorf("invalidation listener: waiting: %w", err)
		}
		// Quiet for a while: prove the connection still carries messages.
		pctx, cancel := context.WithTimeout(ctx, w.timeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("invalidation listener: heartbeat: %w", err)
		}
	}
}

// deliver hands one notification to h. A payload it cannot read (a newer
// version's) may stand for any change: the cache starts over.
func deliver(payload string, h withDevices) {
	if payload == "d" {
		h.devices.changedAll()
		return
	}
	if len(payload) > 1 {
		switch payload[0] {
		case 'd':
			h.devices.changed(payload[1:])
			return
		case 'k':
			h.APIKeyChanged(payload[1:])
			return
		case 'j':
			if exp, jti, ok := strings.Cut(payload[1:], " "); ok && jti != "" {
				if msec, err := strconv.ParseInt(exp, 10, 64); err == nil {
					h.Revoked(jti, time.UnixMilli(msec))
					return
				}
			}
		}
	}
	h.Unsynced(fmt.Errorf("unreadable invalidation %q", truncate(payload, 40)))
	h.Resynced()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
