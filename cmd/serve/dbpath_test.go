package serve

import (
	"path/filepath"
	"strings"
	"testing"
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
// value that is neither level.
func TestSQLiteSyncFlag(t *testing.T) {
	for _, tt := range []struct {
		env     map[string]string
		args    []string
		full    bool
		refused string
	}{
		{nil, nil, false, ""},
		{nil, []string{"--sqlite-sync", "full"}, true, ""},
		{nil, []string{"--sqlite-sync", "FULL"}, true, ""},
		{map[string]string{"MCPAUTH_SQLITE_SYNC": "full"}, nil, true, ""},
		{nil, []string{"--sqlite-sync", "normal"}, false, ""},
		{nil, []string{"--sqlite-sync", "off"}, false, "neither normal nor full"},
		{nil, []string{"--sqlite-sync", "full", "--db", "postgres://u@127.0.0.1/db"}, false, "SQLite only"},
		{nil, []string{"--sqlite-sync", "full", "--db", ":memory:"}, false, "needs a database file"},
	} {
		o := parse(t, tt.env, tt.args...)
		dsn, err := dbPath(o.DB, func(string) string { return t.TempDir() })
		if err != nil {
			t.Fatal(err)
		}
		got, err := storeOptions(o.SQLiteSync, dsn)
		switch {
		case tt.refused != "":
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("%v %v: err = %v, want a refusal saying %q", tt.env, tt.args, err, tt.refused)
			}
		case err != nil:
			t.Errorf("%v %v: %v", tt.env, tt.args, err)
		case got.SQLiteFullSync != tt.full:
			t.Errorf("%v %v: SQLiteFullSync = %v, want %v", tt.env, tt.args, got.SQLiteFullSync, tt.full)
		}
	}
}
