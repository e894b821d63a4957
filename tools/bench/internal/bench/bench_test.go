package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
)

func TestLoadCountsAnswersAndErrors(t *testing.T) {
	var n atomic.Int64
	res := load(context.Background(), 2, 50*time.Millisecond, func(ctx context.Context) error {
		if n.Add(1)%2 == 0 {
			return context.DeadlineExceeded // any error counts
		}
		return nil
	})
	if res.Requests == 0 || res.Errors == 0 || res.Errors > res.Requests || res.RPS <= 0 {
		t.Errorf("result %+v", res)
	}
}

func TestLoadStopsWhenSpent(t *testing.T) {
	var n atomic.Int64
	res := load(context.Background(), 4, time.Minute, func(context.Context) error {
		if n.Add(1) > 10 {
			return errSpent
		}
		return nil
	})
	if res.Requests != 10 || res.Errors != 0 {
		t.Errorf("result %+v, want 10 requests and no errors", res)
	}
}

func TestMedianAndQuantile(t *testing.T) {
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if q := quantile(ds, 0.5); q != 5 {
		t.Errorf("p50 = %v", q)
	}
	if q := quantile(nil, 0.99); q != 0 {
		t.Errorf("p99 of nothing = %v", q)
	}
}

// A remote target is loaded on its ping path with the given token.
func TestRunRemote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/ping" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	reps, err := Run(context.Background(), Options{Target: srv.URL, Token: "tok", Rounds: 2, Duration: 30 * time.Millisecond, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if len(rep.Paths) != 2 || rep.Paths[0].Ratio != 1 || rep.Paths[1].Errors != 0 || rep.Paths[1].RPS == 0 || len(rep.PerRound) != 2 {
		t.Errorf("report %+v", rep)
	}
}

// In-process: credentials come through flows and every path answers as
// expected (no errors), exchanges included.
func TestRunLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference server")
	}
	var lines []string
	// Slices long enough that one code exchange (a durable SQLite commit)
	// finishes inside one on a loaded machine under -race: a request the
	// slice's deadline cuts off counts neither as answer nor error.
	reps, err := Run(context.Background(), Options{DB: t.TempDir() + "/bench.db", Rounds: 1, Duration: 250 * time.Millisecond,
		Concurrency: 2, Codes: 5, Progress: func(f string, _ ...any) { lines = append(lines, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Mode != InProcess {
		t.Fatalf("without Exe only in-process runs: %d reports", len(reps))
	}
	rep := reps[0]
	if len(rep.Paths) != 7 {
		t.Fatalf("%d paths, want 7", len(rep.Paths))
	}
	for _, s := range rep.Paths {
		if s.Errors != 0 || s.RPS == 0 {
			t.Errorf("%s: %d errors, %.0f req/s", s.Name, s.Errors, s.RPS)
		}
	}
	if len(lines) == 0 {
		t.Error("no progress")
	}
}

// Out-of-process: the baseline and `mcpauth serve` run as children of a
// freshly built binary, pinned when the machine allows, and every path
// answers without errors. 200 ms per path: under -race on a loaded machine,
// children pinned to one core each answered nothing within 30 ms.
func TestRunOutOfProcess(t *testing.T) {
	opts := Options{Exe: buildExe(t), Baseline: selfExe(t), Modes: []Mode{OutOfProcess}, Rounds: 1, Duration: 200 * time.Millisecond, Concurrency: 2, Codes: 5}
	if PinSupported && runtime.NumCPU() >= 2 {
		opts.ServerCPUs, opts.LoadCPUs = []int{1}, []int{0}
	}
	reps, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Mode != OutOfProcess || len(reps[0].Paths) != 7 {
		t.Fatalf("reports %+v", reps)
	}
	for _, s := range reps[0].Paths {
		if s.Errors != 0 || s.RPS == 0 {
			t.Errorf("%s: %d errors, %.0f req/s", s.Name, s.Errors, s.RPS)
		}
	}
}

// With SQLiteFullSync the serve child runs with --sqlite-sync full (an
// unknown flag would stop it from starting), and the report says so.
func TestRunOutOfProcessFullSync(t *testing.T) {
	opts := Options{Exe: buildExe(t), Baseline: selfExe(t), Modes: []Mode{OutOfProcess}, Rounds: 1, Duration: 30 * time.Millisecond, Concurrency: 2, Codes: 5,
		SQLiteFullSync: true, Only: "exchange"}
	reps, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if rep.SQLiteSync != "full" || len(rep.Paths) != 2 || rep.Paths[1].Errors != 0 || rep.Paths[1].RPS == 0 {
		t.Fatalf("report: sync %q, paths %+v", rep.SQLiteSync, rep.Paths)
	}
	md := string(rep.Markdown("", nil))
	for _, want := range []string{"synchronous=FULL", "--sqlite-sync full"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown does not say %q:\n%s", want, md)
		}
	}
}

// The regenerate command names --sqlite-sync full inside the quoted
// command with-postgres.sh runs, where bench will read it.
func TestMarkdownCommandNamesFullSync(t *testing.T) {
	r, pg := sampleReport(), sampleReport()
	r.SQLiteSync, pg.Store = "full", "PostgreSQL"
	md := string(r.Markdown("", nil, pg))
	want := "--sqlite-sync full --postgres \"$MCPAUTH_TEST_POSTGRES_URL\"'"
	if strings.Count(md, want) != 2 {
		t.Errorf("want the command to hold %q (once in the header, once under Regenerate):\n%s", want, md)
	}
}

func sampleReport() *Report {
	no, yes := false, true
	return &Report{Machine: "linux/amd64", Cores: 2, Rounds: 3, Concurrency: 16, Duration: "2s", Paths: []Summary{
		{Name: "bare baseline", RPS: 1000, Ratio: 1},
		{Name: "ping <JWT>", RPS: 900, Ratio: 0.9, Target: 0.9, MeetsGoal: &yes},
		{Name: "code exchange", RPS: 180, Ratio: 0.18, Target: 0.25, MeetsGoal: &no},
	}}
}

func TestSVGIsWellFormed(t *testing.T) {
	svg := sampleReport().SVG()
	d := xml.NewDecoder(bytes.NewReader(svg))
	rects, texts := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "text":
				texts++
			}
		}
	}
	// background, three bars, two target ticks
	if rects != 6 || texts == 0 {
		t.Errorf("%d rects, %d texts", rects, texts)
	}
	if !bytes.Contains(svg, []byte("ping &lt;JWT&gt;")) {
		t.Error("path names are not escaped")
	}
}

func TestMarkdownKeepsHandWrittenNotes(t *testing.T) {
	old := []byte("# old\n\n" + ManualMarker + "\n## Notes\nkept\n")
	md := string(sampleReport().Markdown("BENCHMARKS.svg", old))
	for _, want := range []string{"| code exchange | 180 |", "≥ 0.25 ✗", "![ratios to the bare baseline](BENCHMARKS.svg)", "--chart BENCHMARKS.svg", ManualMarker + "\n## Notes\nkept\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "# old") {
		t.Error("the generated part of the old file survived")
	}
}

// selfExe is this test binary, which serves the bare baseline when run
// with BaselineArg (TestMain), as tools/bench does.
func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// buildExe builds the mcpauth binary into a temp dir.
func buildExe(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the mcpauth binary")
	}
	exe := filepath.Join(t.TempDir(), "mcpauth")
	build := exec.Command("go", "build", "-o", exe, "github.com/mcpauth/mcpauth/cmd/mcpauth")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// --postgres: a second out-of-process run, `mcpauth serve` on a real
// PostgreSQL database, whose paths answer without errors and become the
// PostgreSQL columns of the Markdown table. 300 ms per path: a PostgreSQL
// write (an fsync) on a loaded machine can outlast a shorter slice.
func TestRunOutOfProcessPostgres(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	opts := Options{Exe: buildExe(t), Baseline: selfExe(t), Modes: []Mode{OutOfProcess}, Postgres: dsn, Rounds: 1, Duration: 300 * time.Millisecond, Concurrency: 2, Codes: 5}
	reps, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL's seven paths, then ping (JWT and API key) for two
	// variants: two instances round-robin, and --strict-revocation.
	if len(reps) != 2 || reps[0].Store != "SQLite" || reps[1].Store != "PostgreSQL" || len(reps[1].Paths) != 7+2*2 {
		names := []string{}
		for _, r := range reps {
			for _, p := range r.Paths {
				names = append(names, r.Store+": "+p.Name)
			}
		}
		t.Fatalf("%d reports, paths %q", len(reps), names)
	}
	for _, s := range reps[1].Paths {
		if s.Errors != 0 || s.RPS == 0 {
			t.Errorf("PostgreSQL %s: %d errors, %.0f req/s", s.Name, s.Errors, s.RPS)
		}
	}
	md := string(reps[0].Markdown("", nil, reps[1:]...))
	for _, want := range []string{"PostgreSQL req/s", "| code exchange (SQLite) |", `--postgres "$MCPAUTH_TEST_POSTGRES_URL"`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// The scale mode, small: 300 device flows on a `mcpauth serve` child all
// get polled answers (pending or slow_down, never an error), and the
// child's RSS is read. No timing is asserted.
func TestRunScale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe := buildExe(t)
	var lines []string
	rs, err := RunScale(context.Background(), Options{Exe: exe, DeviceFlows: []int{300}, FlowDuration: 3 * time.Second,
		Progress: func(f string, _ ...any) { lines = append(lines, f) }})
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	// Each flow first polls at a random point of its 5 s interval: some
	// within 3 s, surely.
	if r.Flows != 300 || r.Polls == 0 || r.Errors != 0 || r.P99ms <= 0 {
		t.Errorf("result %+v", r)
	}
	if r.RSSIdleMiB <= 0 || r.RSSPeakMiB < r.RSSIdleMiB {
		t.Errorf("RSS idle %.1f MiB, peak %.1f MiB", r.RSSIdleMiB, r.RSSPeakMiB)
	}
	md := string((&Report{Scale: rs}).Markdown("", nil))
	for _, want := range []string{"### Device flows at scale", "| 300 | ", "--device-flows 300 --flow-duration 3s", ScaleLimits} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
