package sqlstore

import (
	"path/filepath"
	"testing"
	"time"
)

// Clients stored before migration 7 recorded use may hold live grants, so
// the migration counts them as used at their registration and GC keeps
// them, however old.
func TestMigrationKeepsEarlierClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	ctx := t.Context()
	s := openPath(t, path)
	created := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, stmt := range []string{
		`DROP INDEX clients_used_at_created_at`,
		`ALTER TABLE clients DROP COLUMN used_at`,
		`DELETE FROM schema_migrations WHERE version >= 7`, // later steps are SQLite no-ops
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method, created_at, application_type)
		VALUES ('earlier', 'n', '[]', '[]', '[]', 'mcp', 'none', ?, '')`, created.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openPath(t, path)
	defer s.Close()
	c, err := s.GetClient(ctx, "earlier")
	if err != nil {
		t.Fatal(err)
	}
	if !c.UsedAt.Equal(created) {
		t.Fatalf("UsedAt after the migration = %v, want the registration, %v", c.UsedAt, created)
	}
	if _, err := s.GC(ctx, created.Add(365*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClient(ctx, "earlier"); err != nil {
		t.Fatalf("GC removed a client registered before use was recorded: %v", err)
	}
}
