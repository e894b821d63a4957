package serve

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// The default database lives under the Factory's XDG_DATA_HOME, not the
// process environment's.
func TestDBPathUsesInjectedEnv(t *testing.T) {
	dir := t.TempDir()
	got, err := dbPath("", func(k string) string {
		if k == "XDG_DATA_HOME" {
			return dir
		}
		return ""
	})
	if want := filepath.Join(dir, "mcpauth", "mcpauth.db"); err != nil || got != want {
		t.Errorf("dbPath = %q, %v; want %q", got, err, want)
	}
	if got, _ := dbPath("x.db", nil); got != "x.db" {
		t.Errorf("--db ignored: %q", got)
	}
}

// --sqlite-sync (or MCPAUTH_SQLITE_SYNC) picks SQLite's commit durability;
// full sync where it cannot apply is refused, not ignored, and so is a
// value that is neither level. --postgres-max-conns (or
// MCPAUTH_POSTGRES_MAX_CONNS) caps the store's PostgreSQL connections, by
// default enough for the group-commit lanes and as many reads; a negative
// cap is refused.
func TestStoreFlags(t *testing.T) {
	const pg = "postgres://u@127.0.0.1/db"
	def := sqlstore.DefaultPostgresMaxConns
	for _, tt := range []struct {
		env     map[string]string
		args    []string
		want    sqlstore.Options
		refused string
	}{
		{nil, nil, sqlstore.Options{PostgresMaxConns: def}, ""},
		{nil, []string{"--sqlite-sync", "full"}, sqlstore.Options{SQLiteFullSync: true, PostgresMaxConns: def}, ""},
		{nil, []string{"--sqlite-sync", "FULL"}, sqlstore.Options{SQLiteFullSync: true, PostgresMaxConns: def}, ""},
		{map[string]string{"MCPAUTH_SQLITE_SYNC": "full"}, nil, sqlstore.Options{SQLiteFullSync: true, PostgresMaxConns: def}, ""},
		{nil, []string{"--sqlite-sync", "normal"}, sqlstore.Options{PostgresMaxConns: def}, ""},
		{nil, []string{"--sqlite-sync", "off"}, sqlstore.Options{}, "neither normal nor full"},
		{nil, []string{"--sqlite-sync", "full", "--db", pg}, sqlstore.Options{}, "SQLite only"},
		{nil, []string{"--sqlite-sync", "full", "--db", ":memory:"}, sqlstore.Options{}, "needs a database file"},
		{nil, []string{"--db", pg, "--postgres-max-conns", "8"}, sqlstore.Options{PostgresMaxConns: 8}, ""},
		{map[string]string{"MCPAUTH_POSTGRES_MAX_CONNS": "20"}, []string{"--db", pg}, sqlstore.Options{PostgresMaxConns: 20}, ""},
		{nil, []string{"--db", pg, "--postgres-max-conns", "-1"}, sqlstore.Options{}, "cannot be negative"},
	} {
		o := parse(t, tt.env, tt.args...)
		dsn, err := dbPath(o.DB, func(string) string { return t.TempDir() })
		if err != nil {
			t.Fatal(err)
		}
		got, err := storeOptions(o.SQLiteSync, o.PostgresMaxConns, dsn)
		switch {
		case tt.refused != "":
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("%v %v: err = %v, want a refusal saying %q", tt.env, tt.args, err, tt.refused)
			}
		case err != nil:
			t.Errorf("%v %v: %v", tt.env, tt.args, err)
		case got != tt.want:
			t.Errorf("%v %v: options %+v, want %+v", tt.env, tt.args, got, tt.want)
		}
	}
}
