package conformance

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// rewriteAnswer lets edit change the reference server's answer to the
// requests match selects: a server that behaves otherwise, from outside.
func rewriteAnswer(next http.Handler, match func(*http.Request) bool, edit func(status int, h http.Header, body []byte) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		status, body := edit(rec.Code, rec.Header(), bytes.Clone(rec.Body.Bytes()))
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// scriptedConsent turns the reference server's consent page into one that
// only a browser running JavaScript can use, as single-page sign-in apps
// are: the form approver finds no form on it. Redirects (sign-in, error
// redirects) pass through, so the server is otherwise judged as it is.
func scriptedConsent(next http.Handler) http.Handler {
	return rewriteAnswer(next, func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path == "/oauth/authorize"
	}, func(status int, h http.Header, body []byte) (int, []byte) {
		if status == http.StatusOK && strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			body = []byte(`<!doctype html><title>Sign in</title><div id="app"></div><script src="/app.js"></script>`)
		}
		return status, body
	})
}

// An authorization server whose sign-in page the form approver cannot
// drive: the checks that need consent are inconclusive, never failures of
// the server, and the run exits 0 with a note, as documented.
func TestApproverThatCannotDriveTheSignInIsInconclusive(t *testing.T) {
	inst, err := local.Start(context.Background(), local.Options{Store: memory.New(), Wrap: scriptedConsent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	res := runCmd(t, nil, nil, "--profile", "mcp", inst.URL+"/mcp", "--approve=form", "--json", "-")
	if res.code != clierr.ExitOK {
		t.Fatalf("exit %d, want %d (inconclusive checks do not fail a run)\n%s", res.code, clierr.ExitOK, res.stderr)
	}
	rep := readJSONReport(t, []byte(res.stdout))
	inconclusive := 0
	for _, c := range rep.Checks {
		switch c.Verdict {
		case "fail":
			t.Errorf("%s: fail (%s); the server did nothing wrong", c.ID, c.Reason)
		case "inconclusive":
			inconclusive++
			if !strings.Contains(c.Reason, "approver") || !strings.Contains(c.Flag, "--browser-command") {
				t.Errorf("%s: inconclusive without the reason or the flag that would run it: %q, flag %q", c.ID, c.Reason, c.Flag)
			}
		}
	}
	if inconclusive == 0 || rep.Summary.Inconclusive != inconclusive {
		t.Errorf("%d inconclusive checks, summary says %d; want some (MCP-07 needs consent)", inconclusive, rep.Summary.Inconclusive)
	}
	if v := verdicts(rep); v["MCP-07"] != "inconclusive" {
		t.Errorf("MCP-07: %s, want inconclusive", v["MCP-07"])
	}
	if !strings.Contains(res.stderr, "inconclusive") || !strings.Contains(res.stderr, "do not fail the run") {
		t.Errorf("the text report does not say what inconclusive means:\n%s", res.stderr)
	}
}
