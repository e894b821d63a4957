package serve

import (
	"path/filepath"
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
