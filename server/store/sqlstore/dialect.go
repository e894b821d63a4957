package sqlstore

import (
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds the few differences between SQLite and PostgreSQL. Queries
// are written once in the common subset (ON CONFLICT upserts, RETURNING,
// BIGINT, TEXT) with "?" placeholders and BLOB columns.
type dialect struct {
	name string
	// dollar rewrites "?" placeholders to "$1", "$2", ... (PostgreSQL).
	dollar bool
	// blobType replaces "BLOB" in schema statements.
	blobType string
	// migrationLock, if set, runs first in the migration transaction so that
	// instances starting together migrate one after the other.
	migrationLock string
	// uniqueViolation reports whether err is a unique or primary key violation.
	uniqueViolation func(error) bool
	// retryable, if set, reports an error after which the transaction may
	// simply run again (PostgreSQL's deadlock and serialisation failures).
	retryable func(error) bool
}

var sqliteDialect = dialect{
	name:     "sqlite",
	blobType: "BLOB",
	uniqueViolation: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) &&
			(e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
}

var postgresDialect = dialect{
	name:     "postgres",
	dollar:   true,
	blobType: "BYTEA",
	// The key is arbitrary but fixed: "mcpauth" in ASCII.
	migrationLock: "SELECT pg_advisory_xact_lock(120394395072884)",
	uniqueViolation: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505" // unique_violation
	},
	retryable: pgRetryable,
}

func (d dialect) isRetryable(err error) bool {
	return err != nil && d.retryable != nil && d.retryable(err)
}

// rebind rewrites placeholders for the dialect. Queries here never contain a
// literal "?", so a plain scan is enough.
func (d dialect) rebind(query string) string {
	if !d.dollar || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// ddl adapts a schema statement to the dialect.
func (d dialect) ddl(stmt string) string {
	return strings.ReplaceAll(stmt, "BLOB", d.blobType)
}
