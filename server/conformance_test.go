package server_test

import (
	"context"
	"path/filepath"
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
