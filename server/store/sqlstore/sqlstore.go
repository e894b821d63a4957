// Package sqlstore is the SQL backend of store.Store, for SQLite
// (modernc.org/sqlite, no cgo) and PostgreSQL (pgx). Queries are written once
// with "?" placeholders and rewritten per dialect (see dialect.go), as dex
// does. Times are stored as INTEGER Unix milliseconds (UTC), so they round-trip
// truncated to the millisecond; string slices are stored as JSON text.
//
// Atomicity never relies on read-then-write transactions (which SQLite may
// refuse with SQLITE_BUSY under contention): ConsumeAuthCode is one conditional
// UPDATE, UpdateDeviceCode a compare-and-set on a version column, SetAPIKey and
// GetOrCreateSecret single upsert statements.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers driver "pgx"
	_ "modernc.org/sqlite"             // registers driver "sqlite"

	"github.com/mcpauth/mcpauth/server/store"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store over database/sql. Use Open, OpenWith or OpenSQLite.
type Store struct {
	db *sql.DB
	d  dialect

	stmts sync.Map // query text → *sql.Stmt, see prepared

	// writeMu serialises SQLite writes in this process. SQLite allows one
	// writer at a time anyway; queueing here instead of in SQLite's busy
	// handler (which sleeps and retries) keeps write latency flat under
	// load. Nil for PostgreSQL, which handles concurrent writers itself.
	writeMu *sync.Mutex

	// Updates of one device code take turns in this process, and paced
	// holds each code as its last pacing-only update left it, with the
	// only copy of that pacing (see UpdateDeviceCode and rowCache).
	deviceLocks *deviceLocks
	paced       *rowCache
	// group commits the single-use writes together (see committer); nil
	// gives each its own transaction.
	group *committer
	// watch hears other instances' revocations and key changes
	// (PostgreSQL only; see listen.go).
	watch *watcher

	// gcBatchRows and gcMaxBatches bound GC's statements (see gc.go);
	// tests make them small.
	gcBatchRows, gcMaxBatches int

	// Prepared statements for the reads on every request's path.
	getAPIKeyByHash *sql.Stmt
	isTokenRevoked  *sql.Stmt
	getDeviceCode   *sql.Stmt
}

// Options tune how a database is opened; the zero value is the default.
type Options struct {
	// SQLiteFullSync has every SQLite commit wait until the WAL is synced
	// to disk (synchronous=FULL), so an answered write survives an OS crash
	// or a power loss too. The default (synchronous=NORMAL, SQLite's
	// advice for WAL) syncs only at checkpoints: an answered write survives
	// a crash of the server process, but after an OS crash the last
	// commits may be gone, a spent authorization code unspent again. FULL
	// costs about a quarter of the code exchange's throughput
	// (BENCHMARKS.md). PostgreSQL commits are durable as its server is
	// configured.
	SQLiteFullSync bool
	// PostgresMaxConns caps the connections to PostgreSQL this store opens
	// (0: DefaultPostgresMaxConns). Queries beyond it wait in the process
	// for a free connection instead of starting a backend each, until
	// PostgreSQL's max_connections refused them. Ignored for SQLite.
	PostgresMaxConns int
}

// DefaultPostgresMaxConns is the default of Options.PostgresMaxConns: the
// 16 group-commit lanes (pgLanes) and as many reads and pacing writes at
// once. With it, 2,000 polls a second over a million pending device flows
// answered at p50 1 ms without an error, where without a cap PostgreSQL
// refused 5–15 % (BENCHMARKS.md, "A million pending device flows").
const DefaultPostgresMaxConns = 2 * pgLanes

// ParseSQLiteSync reads a synchronous level as flags name it: "normal" (or
// empty) or "full", in any case; it reports whether it asks for
// SQLiteFullSync.
func ParseSQLiteSync(level string) (full bool, err error) {
	switch strings.ToLower(level) {
	case "", "normal":
		return false, nil
	case "full":
		return true, nil
	}
	return false, fmt.Errorf("%q is neither normal nor full", level)
}

// Open opens the database named by dsn: a "postgres://" or "postgresql://" URL
// selects PostgreSQL, anything else is a SQLite file path (or ":memory:").
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn, o)
	}
	return openSQLite(ctx, dsn, o)
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// maxIdleSQLite is how many SQLite connections stay open between requests;
// each holds at most SQLite's default page cache (2 MB).
const maxIdleSQLite = 16

// OpenSQLite opens (creating if needed) the SQLite database at path and
// migrates it. ":memory:" gives a private in-memory database.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	return openSQLite(ctx, path, Options{})
}

func openSQLite(ctx context.Context, path string, o Options) (*Store, error) {
	q := url.Values{}
	// busy_timeout first, so the other pragmas wait for a lock too.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	// Explicit transactions take the write lock at BEGIN: a deferred one that
	// upgrades from read to write can fail with SQLITE_BUSY at once.
	q.Set("_txlock", "immediate")

	var dsn string
	memory := path == ":memory:"
	if memory {
		dsn = "file::memory:?" + q.Encode()
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		synchronous := "NORMAL"
		if o.SQLiteFullSync {
			synchronous = "FULL"
		}
		q.Add("_pragma", "synchronous("+synchronous+")")
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite path %q: %w", path, err)
		}
		if err := restrictFile(abs); err != nil {
			return nil, err
		}
		// A file: URI escapes '?' and '#' in the path, which a plain name cannot.
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
		dsn = u.String()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if memory {
		// Each connection to ":memory:" is its own database: keep exactly one,
		// forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	} else {
		// database/sql keeps 2 idle connections by default: under concurrent
		// requests the rest were closed after each use and reopened (pragmas,
		// schema, prepared statements again) by the next. Keep them.
		db.SetMaxIdleConns(maxIdleSQLite)
	}
	s, err := open(ctx, db, sqliteDialect)
	if err != nil {
		return nil, err
	}
	s.writeMu = &sync.Mutex{}
	s.paced = newRowCache()
	s.group = &committer{s: s, lanes: 1}
	return s, nil
}

// restrictFile makes the database readable by its owner only before SQLite
// opens it: it holds the generated keys and the sealed API keys. SQLite
// creates the -wal and -shm files with the database file's mode, so they
// follow. A file an older version created 0644 is tightened too, or the
// keys in it would stay readable to every local user.
func restrictFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sqlite: restricting %s to its owner: %w", p, err)
		}
	}
	return nil
}

func openPostgres(ctx context.Context, dsn string, o Options) (*Store, error) {
	conns := o.PostgresMaxConns
	switch {
	case conns < 0:
		return nil, fmt.Errorf("open postgres: %d connections at most: want at least 1", conns)
	case conns == 0:
		conns = DefaultPostgresMaxConns
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	// Capped: under a burst, database/sql would otherwise start a backend
	// (a process) per query beyond the pool, until PostgreSQL refused
	// connections. Waiting for a connection cannot deadlock: no path here
	// holds one connection while it waits for a second (a transaction runs
	// all its statements on its own, and statements are prepared before a
	// group's transaction begins). All of them stay open between requests:
	// database/sql keeps 2 idle by default, so every burst started backends
	// again.
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s, err := open(ctx, db, postgresDialect)
	if err != nil {
		return nil, err
	}
	// Group commits hold at most half the connections, so reads find some.
	s.group = &committer{s: s, lanes: min(pgLanes, max(1, conns/2))}
	s.gcBatchRows = 0 // one statement a table (gc.go)
	s.paced = newSharedRowCache()
	s.watch = newWatcher(dsn, s.paced)
	return s, nil
}

// open checks the connection, migrates and prepares; it closes db on failure.
func open(ctx context.Context, db *sql.DB, d dialect) (s *Store, err error) {
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("connect %s: %w", d.name, err)
	}
	s = &Store{db: db, d: d, deviceLocks: &deviceLocks{}, gcBatchRows: gcBatchRows, gcMaxBatches: gcMaxBatches}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.getAPIKeyByHash, `SELECT ` + apiKeyCols + ` FROM api_keys WHERE hash = ?`},
		{&s.isTokenRevoked, `SELECT 1 FROM revoked_tokens WHERE jti = ?`},
		{&s.getDeviceCode, `SELECT ` + deviceCols + ` FROM device_codes WHERE hash = ?`},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, d.rebind(p.query)); err != nil {
			s.closeStmts()
			return nil, fmt.Errorf("prepare %q: %w", p.query, err)
		}
	}
	return s, nil
}

func (s *Store) closeStmts() {
	for _, st := range []*sql.Stmt{s.getAPIKeyByHash, s.isTokenRevoked, s.getDeviceCode} {
		if st != nil {
			st.Close()
		}
	}
	s.stmts.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
}

// Close closes the prepared statements and the database.
func (s *Store) Close() error {
	s.closeStmts()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.d.name, err)
	}
	return nil
}

// exec runs a write statement written with "?" placeholders.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	defer s.lockWrite()()
	st, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// prepared returns the statement for query, preparing it once: every query
// here is a constant, so the cache is bounded, and SQLite no longer parses
// the same SQL on every request.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if v, ok := s.stmts.Load(query); ok {
		return v.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, s.d.rebind(query))
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if v, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return v.(*sql.Stmt), nil
	}
	return st, nil
}

// lockWrite takes the SQLite write lock (a no-op for PostgreSQL) and returns
// its release.
func (s *Store) lockWrite() func() {
	if s.writeMu == nil {
		return func() {}
	}
	s.writeMu.Lock()
	return s.writeMu.Unlock
}

// queryRow runs a read written with "?" placeholders.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.prepared(ctx, query)
	if err != nil {
		// A *sql.Row cannot carry our error: let database/sql report it.
		return s.db.QueryRowContext(ctx, s.d.rebind(query), args...)
	}
	return st.QueryRowContext(ctx, args...)
}
