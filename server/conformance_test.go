package server_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// startSuiteTarget starts the reference server and its development identity
// provider on loopback with opts (opts.Clock is replaced by clk, a fresh
// Offset clock when nil) and returns the conformance target for it: approval
// through the server's own pages, time moved through clk over HTTP, at the
// server's /api/test/clock, as against `mcpauth serve --test-clock`.
func startSuiteTarget(t *testing.T, opts local.Options, clk *clock.Offset) conformance.Target {
	t.Helper()
	if clk == nil {
		clk = clock.NewOffset(nil)
	}
	opts.TestClock = clk
	inst, err := local.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	a, err := conformance.NewFormApprover(inst.URL, "conformance", nil)
	if err != nil {
		t.Fatal(err)
	}
	return conformance.Target{BaseURL: inst.URL, Approver: a, Clock: &conformance.HTTPClock{URL: inst.URL + "/api/test/clock"}}
}

// runSuite runs the whole catalogue, destructive checks included (the server
// lives for this test only).
func runSuite(t *testing.T, target conformance.Target) *conformance.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return conformance.Run(ctx, target, conformance.Options{Destructive: true, Parallel: 8})
}

func reportText(rep *conformance.Report) string {
	var b strings.Builder
	_ = rep.WriteText(&b, conformance.TextOptions{})
	return b.String()
}

// The reference server passes every check of the suite, on every store.
func TestConformanceSuitePasses(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "mcpauth.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			// SQLite runs as mcpauth serve runs it: with the credential cache.
			opts := local.Options{Store: newStore(t), CacheCredentials: name == "sqlite"}
			rep := runSuite(t, startSuiteTarget(t, opts, nil))
			if got, want := len(rep.Results), len(conformance.Catalogue()); got != want {
				t.Errorf("report has %d results, want %d", got, want)
			}
			for _, r := range rep.Results {
				if r.Verdict != conformance.VerdictPass {
					t.Errorf("%s %s: %s: %s", r.ID, r.Title, r.Verdict, r.Reason)
				}
			}
			if rep.Failed() {
				t.Error("the run failed")
			}
			if t.Failed() {
				t.Log("\n" + reportText(rep))
			}
			t.Logf("%s: %+v in %s", name, rep.Summary(), rep.Duration.Round(time.Millisecond))
		})
	}
}

// The runner against a real server (these used to run against a second,
// hand-written fake of the service in conformance/).

// A baseline listing the one failing check keeps the run green; where the
// check passes, the entry is stale and fails the run.
func TestConformanceBaseline(t *testing.T) {
	b, _ := conformance.ParseBaseline(strings.NewReader("DISC-07\n"))
	run := func(target conformance.Target) *conformance.Report {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return conformance.Run(ctx, target, conformance.Options{Baseline: b, Filter: regexp.MustCompile(`^DISC-`)})
	}
	var slash fault
	for _, f := range faults() {
		if f.name == "issuer with a trailing slash" {
			slash = f
		}
	}
	clk := clock.NewOffset(nil)
	rep := run(startSuiteTarget(t, local.Options{Store: memory.New(), Wrap: slash.wrap(clk)}, clk))
	if rep.Failed() {
		t.Errorf("the only failure is expected, yet the run failed: %+v", rep.Stale)
	}
	rep = run(startSuiteTarget(t, local.Options{Store: memory.New()}, nil))
	if !rep.Failed() || len(rep.Stale) != 1 {
		t.Errorf("DISC-07 passes against a correct server: want a stale entry, got %q", rep.Stale)
	}
}

// A target without approver, clock, session or API key runs what it can and
// skips the rest, saying why; nothing that needs those passes silently.
func TestConformanceMissingCapabilitiesSkip(t *testing.T) {
	base := startSuiteTarget(t, local.Options{Store: memory.New()}, nil).BaseURL
	rep := conformance.Run(context.Background(), conformance.Target{BaseURL: base}, conformance.Options{Parallel: 8})
	ran := 0
	for i, c := range conformance.Catalogue() {
		r := rep.Results[i]
		switch {
		case len(c.Needs) == 0 && r.Verdict == conformance.VerdictPass:
			ran++
		case len(c.Needs) == 0 && r.Verdict == conformance.VerdictSkip && strings.Contains(r.Reason, "asks for login"):
			// error redirects: this server asks for login before judging
		case len(c.Needs) == 0:
			t.Errorf("%s: %s %s", r.ID, r.Verdict, r.Reason)
		case r.Verdict != conformance.VerdictSkip || !strings.HasPrefix(r.Reason, "needs") && !strings.Contains(r.Reason, "destructive") && !strings.Contains(r.Reason, "changes state"):
			t.Errorf("%s (needs %v): got %s %q, want a skip that says what it needs", r.ID, c.Needs, r.Verdict, r.Reason)
		}
	}
	if ran < 50 {
		t.Errorf("only %d checks run without approver or clock", ran)
	}
}

func TestFormApproverReportsMissingPages(t *testing.T) {
	base := startSuiteTarget(t, local.Options{Store: memory.New()}, nil).BaseURL
	a, err := conformance.NewFormApprover(base, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A device code nobody issued: the confirmation form never appears.
	err = a.ApproveDevice(ctx, base+"/auth/device", "ZZZZ-0000")
	if err == nil || !strings.Contains(err.Error(), "no form with a \"approve\" button") {
		t.Errorf("unknown user code: err = %v", err)
	}
	// An authorization request for an unknown client: a 400 page, no consent form.
	_, err = a.ApproveConsent(ctx, base+"/oauth/authorize?client_id=nope&redirect_uri="+url.QueryEscape("http://127.0.0.1:43117/callback"))
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("unknown client: err = %v", err)
	}
	if _, err := conformance.NewFormApprover("not a url", "", nil); err == nil {
		t.Errorf("relative base URL accepted")
	}
	cs, err := a.Session(ctx)
	if err != nil || !slices.ContainsFunc(cs, func(c *http.Cookie) bool { return c.Name == "auth_token" && c.Raw != "" }) {
		t.Errorf("session: %v %v", cs, err)
	}
}
