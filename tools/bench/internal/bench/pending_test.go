package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

// The pending mode, small: 3,000 seeded flows on a `mcpauth serve` child
// answer every sampled poll pending (or slow_down), the server's own GC
// deletes them once expired (the run fails unless a poll then finds them
// gone), and polls and device code requests go on meanwhile. No timing is
// asserted.
func TestRunPending(t *testing.T) {
	checkPending(t, "", "SQLite")
}

// The same on PostgreSQL, in a database the mode creates and drops.
func TestRunPendingPostgres(t *testing.T) {
	checkPending(t, pgtest.URL(t), "PostgreSQL")
}

func checkPending(t *testing.T, pg, storeLabel string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	opts := Options{Exe: buildExe(t), Postgres: pg, ScalePending: []int{3000}, SampleRate: 200, SampleDuration: 2 * time.Second, GCInterval: 500 * time.Millisecond}
	rs, err := RunPending(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	runs := 1 // SQLite, and PostgreSQL when given
	if pg != "" {
		runs = 2
	}
	r := rs[len(rs)-1]
	if len(rs) != runs || r.Store != storeLabel {
		t.Fatalf("results %+v", rs)
	}
	if r.Flows != 3000 || r.Live != 3000 || r.Polls == 0 || r.Errors != 0 || r.GCErrors != 0 || r.P99ms <= 0 || r.FirstError != "" {
		t.Errorf("result %+v", r)
	}
	if r.GCms <= 0 || r.GCPolls == 0 || r.DBMiB <= 0 || r.RSSIdleMiB <= 0 || r.RSSPeakMiB < r.RSSIdleMiB {
		t.Errorf("collection or sizes: %+v", r)
	}
	var md strings.Builder
	if err := WritePending(&md, "the command", rs); err != nil {
		t.Fatal(err)
	}
	if want := "| " + storeLabel + " | 3000 | "; !strings.Contains(md.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, md.String())
	}
}
