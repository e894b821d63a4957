package sqlstore

import (
	"context"
	"fmt"
	"strings"
)

// migrations is the schema history: migrations[i] brings the database to
// version i+1. Never edit an applied step; append a new one.
//
// Times are BIGINT Unix milliseconds. The zero time.Time is stored as its own
// value (-62135596800000), so it compares as the distant past, exactly as in
// the memory backend. There are no foreign keys: a code or key naming a client
// or user that does not exist is the server's concern, and the memory backend
// behaves the same.
var migrations = [][]string{
	{ // 1: initial schema
		`CREATE TABLE clients (
			id TEXT PRIMARY KEY,
			name TEXT NOT NULL,
			redirect_uris TEXT NOT NULL, -- JSON array
			grant_types TEXT NOT NULL, -- JSON array
			response_types TEXT NOT NULL, -- JSON array
			scope TEXT NOT NULL,
			token_endpoint_auth_method TEXT NOT NULL,
			created_at BIGINT NOT NULL
		)`,
		`CREATE TABLE auth_codes (
			hash TEXT PRIMARY KEY,
			client_id TEXT NOT NULL,
			redirect_uri TEXT NOT NULL,
			code_challenge TEXT NOT NULL,
			scope TEXT NOT NULL,
			resource TEXT NOT NULL,
			user_id TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			used INTEGER NOT NULL,
			used_at BIGINT NOT NULL,
			token_id TEXT NOT NULL,
			token_exp BIGINT NOT NULL
		)`,
		`CREATE INDEX auth_codes_expires_at ON auth_codes (expires_at)`,
		`CREATE TABLE device_codes (
			hash TEXT PRIMARY KEY,
			user_code_hash TEXT NOT NULL UNIQUE,
			client_id TEXT NOT NULL,
			scope TEXT NOT NULL,
			status TEXT NOT NULL,
			user_id TEXT NOT NULL,
			interval_ns BIGINT NOT NULL,
			last_poll_at BIGINT NOT NULL,
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			version BIGINT NOT NULL -- bumped by every UpdateDeviceCode
		)`,
		`CREATE INDEX device_codes_expires_at ON device_codes (expires_at)`,
		`CREATE TABLE users (
			id TEXT PRIMARY KEY,
			name TEXT NOT NULL,
			subject TEXT NOT NULL UNIQUE,
			created_at BIGINT NOT NULL
		)`,
		`CREATE TABLE api_keys (
			user_id TEXT PRIMARY KEY,
			hash TEXT NOT NULL UNIQUE,
			sealed BLOB,
			created_at BIGINT NOT NULL
		)`,
		`CREATE TABLE revoked_tokens (
			jti TEXT PRIMARY KEY,
			expires_at BIGINT NOT NULL
		)`,
		`CREATE INDEX revoked_tokens_expires_at ON revoked_tokens (expires_at)`,
		`CREATE TABLE secrets (
			name TEXT PRIMARY KEY,
			value BLOB
		)`,
	},
	{ // 2: shared counters (the test clock's offset)
		`CREATE TABLE counters (
			name TEXT PRIMARY KEY,
			value BIGINT NOT NULL
		)`,
	},
	{ // 3: cached Client ID Metadata Documents, shared by instances
		`CREATE TABLE client_metadata_documents (
			url TEXT PRIMARY KEY,
			body BLOB NOT NULL,
			fetched_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL
		)`,
		`CREATE INDEX client_metadata_documents_expires_at ON client_metadata_documents (expires_at)`,
	},
	{ // 4: the client's application_type (MCP 2026-07-28 registration)
		`ALTER TABLE clients ADD COLUMN application_type TEXT NOT NULL DEFAULT ''`,
	},
	{ // 5: refresh token families (RFC 9700 §4.14.2 rotation)
		`CREATE TABLE refresh_families (
			id TEXT PRIMARY KEY, -- jti of the family's first access token
			client_id TEXT NOT NULL,
			user_id TEXT NOT NULL,
			scope TEXT NOT NULL,
			resource TEXT NOT NULL,
			expires_at BIGINT NOT NULL,
			revoked INTEGER NOT NULL
		)`,
		`CREATE INDEX refresh_families_expires_at ON refresh_families (expires_at)`,
		`CREATE TABLE refresh_tokens (
			hash TEXT PRIMARY KEY,
			family_id TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			token_id TEXT NOT NULL, -- jti of the access token issued with it
			token_exp BIGINT NOT NULL,
			used INTEGER NOT NULL,
			used_at BIGINT NOT NULL
		)`,
		`CREATE INDEX refresh_tokens_family_id ON refresh_tokens (family_id)`,
	},
	{ // 6: what the family's latest rotation kept (the refresh reuse interval)
		`ALTER TABLE refresh_families ADD COLUMN spent_hash TEXT NOT NULL DEFAULT ''`, // the token it spent
		`ALTER TABLE refresh_families ADD COLUMN successor BLOB`,
	},
	{ // 7: when a client was first used for a login, so GC can remove those never used
		`ALTER TABLE clients ADD COLUMN used_at BIGINT NOT NULL DEFAULT -62135596800000`,
		// Clients registered before use was recorded may hold live grants:
		// they count as used, at their registration.
		`UPDATE clients SET used_at = created_at`,
		`CREATE INDEX clients_used_at_created_at ON clients (used_at, created_at)`,
	},
	{ // 8: PostgreSQL tells every instance's credential cache what changed (see listen.go)
		// In the writing transaction, whichever statement writes: the
		// notification is sent exactly when the change commits.
		postgresOnly + `CREATE FUNCTION mcpauth_notify_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				PERFORM pg_notify('` + invalidationChannel + `', 'j' || NEW.expires_at || ' ' || NEW.jti);
				RETURN NULL;
			END $$`,
		postgresOnly + `CREATE TRIGGER revoked_tokens_notify AFTER INSERT OR UPDATE ON revoked_tokens
			FOR EACH ROW EXECUTE FUNCTION mcpauth_notify_revoked()`,
		postgresOnly + `CREATE FUNCTION mcpauth_notify_api_key() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'DELETE' THEN
					PERFORM pg_notify('` + invalidationChannel + `', 'k' || OLD.user_id);
				ELSE
					PERFORM pg_notify('` + invalidationChannel + `', 'k' || NEW.user_id);
				END IF;
				RETURN NULL;
			END $$`,
		postgresOnly + `CREATE TRIGGER api_keys_notify AFTER INSERT OR UPDATE OR DELETE ON api_keys
			FOR EACH ROW EXECUTE FUNCTION mcpauth_notify_api_key()`,
	},
	{ // 9: PostgreSQL tells every instance's device rows (rowCache) what changed
		// Any change but the last poll's time (which old binaries write on
		// every poll, and this one on an instance's first poll of a code):
		// a raised interval (slow_down) counts, so every instance paces
		// from it. The payload is the code's hash, as stored, never the
		// code.
		postgresOnly + `CREATE FUNCTION mcpauth_notify_device_code() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				PERFORM pg_notify('` + invalidationChannel + `', 'd' || NEW.hash);
				RETURN NULL;
			END $$`,
		postgresOnly + `CREATE TRIGGER device_codes_notify AFTER UPDATE ON device_codes FOR EACH ROW
			WHEN ((OLD.hash, OLD.user_code_hash, OLD.client_id, OLD.scope, OLD.status, OLD.user_id, OLD.interval_ns, OLD.created_at, OLD.expires_at)
				IS DISTINCT FROM (NEW.hash, NEW.user_code_hash, NEW.client_id, NEW.scope, NEW.status, NEW.user_id, NEW.interval_ns, NEW.created_at, NEW.expires_at))
			EXECUTE FUNCTION mcpauth_notify_device_code()`,
		// Deletions (GC, a replaced expired code) in one payload per
		// statement, "d": every row is read again, instead of a
		// notification per collected row.
		postgresOnly + `CREATE FUNCTION mcpauth_notify_device_codes_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF EXISTS (SELECT 1 FROM deleted) THEN
					PERFORM pg_notify('` + invalidationChannel + `', 'd');
				END IF;
				RETURN NULL;
			END $$`,
		postgresOnly + `CREATE TRIGGER device_codes_deleted_notify AFTER DELETE ON device_codes
			REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT
			EXECUTE FUNCTION mcpauth_notify_device_codes_deleted()`,
	},
}

// postgresOnly starts a migration statement that SQLite skips.
const postgresOnly = "-- postgres only\n"

// migrate applies the missing steps in one transaction. On SQLite the
// transaction starts IMMEDIATE (see OpenSQLite), on PostgreSQL it takes an
// advisory lock, so concurrent openers wait for each other and the second
// finds nothing to do.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit

	if s.d.migrationLock != "" {
		if _, err := tx.ExecContext(ctx, s.d.migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	if current > len(migrations) {
		return fmt.Errorf("migrate: database schema version %d is newer than this binary's %d", current, len(migrations))
	}
	for i := current; i < len(migrations); i++ {
		for _, stmt := range migrations[i] {
			if strings.HasPrefix(stmt, postgresOnly) && s.d.name != postgresDialect.name {
				continue
			}
			if _, err := tx.ExecContext(ctx, s.d.ddl(stmt)); err != nil {
				return fmt.Errorf("migrate to version %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO schema_migrations (version) VALUES (?)`), i+1); err != nil {
			return fmt.Errorf("migrate to version %d: record: %w", i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
