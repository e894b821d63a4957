package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/htmlform"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// The mcp profile's verdicts on servers that behave as real ones do, where
// the suite once blamed them (or passed them for the wrong reason): each
// behaviour is injected into the reference server, and the named checks
// must come to the verdicts given. The faults of TestConformanceMCPProfile
// show the same checks still catch what is wrong.
func TestMCPProfileVerdictsOnRealServerBehaviour(t *testing.T) {
	const (
		pass, fail, skip = conformance.VerdictPass, conformance.VerdictFail, conformance.VerdictSkip
		inconclusive     = conformance.VerdictInconclusive
	)
	for _, c := range []struct {
		name string
		wrap func(clock.Clock) func(http.Handler) http.Handler
		want map[string]conformance.Verdict
	}{
		// The refusal is a 400 page one redirect away.
		{"error page behind a redirect", noClock(errorPageRedirect),
			map[string]conformance.Verdict{"MCP-47": pass, "MCP-48": pass, "MCP-50": pass}},
		// The implicit grant refused in the fragment, with a description
		// that names what it does not issue.
		{"implicit refused in the fragment", noClock(implicitRefusedInFragment),
			map[string]conformance.Verdict{"MCP-51": pass}},
		// Every request of the suite's client refused: the refusals the
		// PKCE and response_type checks look for say nothing then.
		{"every authorization request refused", noClock(refuseEveryAuthorization),
			map[string]conformance.Verdict{"MCP-06": inconclusive, "MCP-44": inconclusive, "MCP-46": inconclusive,
				"MCP-51": inconclusive, "MCP-83": inconclusive, "MCP-47": pass, "MCP-48": pass, "MCP-50": pass}},
		// Consent asked only with prompt=consent, as first-party servers do.
		{"consent asked only with prompt=consent", noClock(consentOnlyWhenPrompted),
			map[string]conformance.Verdict{"MCP-53": pass}},
		// An MCP server of 2025-11-25 that reads no version header: MCP-75
		// is its failure, once; 2026-07-28's headers are not its business.
		{"MCP server of an earlier revision", noClock(earlierRevisionMCP),
			map[string]conformance.Verdict{"MCP-75": fail, "MCP-76": skip, "MCP-77": skip}},
		// A spent refresh token answered again for 30 s.
		{"refresh reuse window of 30 s", refreshReuseWindow(30 * time.Second),
			map[string]conformance.Verdict{"MCP-12": pass}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewOffset(nil)
			opts := local.Options{SigningKey: []byte(faultKey), Store: memory.New(), Wrap: c.wrap(clk)}
			target := startSuiteTargetCIMD(t, opts, clk, nil)
			target.BaseURL += "/mcp"
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep := conformance.RunChecks(ctx, target, conformance.MCPCatalogue(), conformance.Options{Parallel: 8})
			for _, r := range rep.Results {
				if want, ok := c.want[r.ID]; ok && r.Verdict != want {
					t.Errorf("%s: %s, want %s (%s)", r.ID, r.Verdict, want, r.Reason)
				}
			}
		})
	}
}

// errorPageRedirect sends a refused authorization request to an error page
// of the server's own, which answers 400.
func errorPageRedirect(next http.Handler) http.Handler {
	moved := rewriteResponse(route("GET", "/oauth/authorize"), func(_ *http.Request, res *faultResponse) {
		if res.status == http.StatusBadRequest {
			res.status, res.body = http.StatusFound, nil
			res.header.Set("Location", "/oauth/error?error=invalid_request")
		}
	})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/error" {
			http.Error(w, "The request is not valid.", http.StatusBadRequest)
			return
		}
		moved.ServeHTTP(w, r)
	})
}

// implicitAnswer answers response_type=token with a redirect carrying
// fragment(its query) in the fragment, the implicit grant's response mode.
func implicitAnswer(fragment func(q url.Values) url.Values) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path != "/oauth/authorize" || q.Get("response_type") != "token" {
				next.ServeHTTP(w, r)
				return
			}
			http.Redirect(w, r, q.Get("redirect_uri")+"#"+fragment(q).Encode(), http.StatusFound)
		})
	}
}

// implicitRefusedInFragment refuses the implicit grant in the fragment,
// with a description that names what it does not issue.
var implicitRefusedInFragment = implicitAnswer(func(q url.Values) url.Values {
	return url.Values{"error": {"unsupported_response_type"}, "state": {q.Get("state")},
		"error_description": {"this server never puts an access_token in a URL"}}
})

// refuseEveryAuthorization refuses every authorization request, as a
// server does whose policy forbids the suite's redirect URI.
func refuseEveryAuthorization(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/authorize" {
			http.Error(w, "redirect_uri not allowed by policy", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// consentOnlyWhenPrompted approves a signed-in user's authorization
// request at once, without a consent page, unless it asks prompt=consent.
func consentOnlyWhenPrompted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !route("GET", "/oauth/authorize")(r) || r.URL.Query().Get("prompt") == "consent" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		page, err := htmlform.Parse(&url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery}, rec.Body.Bytes())
		f, b := (*htmlform.Form)(nil), htmlform.Button{}
		if err == nil && rec.Code == http.StatusOK {
			f, b = page.FormWith("approve")
		}
		if f == nil {
			copyRecorded(w, rec)
			return
		}
		approve := httptest.NewRequest(http.MethodPost, f.Action.String(), strings.NewReader(f.Submission(b, nil).Encode()))
		approve.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		approve.Header.Set("Cookie", r.Header.Get("Cookie"))
		approve.Header.Set("Origin", "http://"+r.Host)
		approve.Host = r.Host
		rec = httptest.NewRecorder()
		next.ServeHTTP(rec, approve)
		copyRecorded(w, rec)
	})
}

func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// earlierRevisionMCP is an MCP endpoint of 2025-11-25 that reads no
// version or method header: it answers every request with a valid token.
func earlierRevisionMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		replaceBody(r, b)
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r) // the token is judged as before
		if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
			copyRecorded(w, rec)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &msg)
		var answer any = map[string]any{"tools": []any{}}
		switch msg.Method {
		case "initialize":
			answer = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"serverInfo": map[string]any{"name": "earlier", "version": "1"}}
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
				"error": map[string]any{"code": -32601, "message": "method not found"}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": answer})
	})
}

// forever is a reuse window that never closes.
const forever = time.Duration(1<<63 - 1)

// refreshReuseWindow answers a spent refresh token again, with what its
// first refresh got, for window after that refresh (on the server's
// clock), as servers with a "reuse interval" do; afterwards the server
// judges it. Refreshes pass one at a time, so the winner is remembered.
func refreshReuseWindow(window time.Duration) func(clock.Clock) func(http.Handler) http.Handler {
	return func(clk clock.Clock) func(http.Handler) http.Handler {
		type answer struct {
			body []byte
			at   time.Time
		}
		var mu sync.Mutex
		answered := map[string]answer{}
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !refreshRequests(r) {
					next.ServeHTTP(w, r)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				rt := r.PostForm.Get("refresh_token")
				if a, ok := answered[rt]; ok && clk.Now().Sub(a.at) < window {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Cache-Control", "no-store")
					_, _ = w.Write(a.body)
					return
				}
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if rec.Code == http.StatusOK {
					answered[rt] = answer{rec.Body.Bytes(), clk.Now()}
				}
				copyRecorded(w, rec)
			})
		}
	}
}

// --- Faults of the mcp profile's newer reading (TestConformanceMCPProfile)

// mcpMethodIgnored serves a 2026-07-28 request whatever its Mcp-Method
// header says: the header is set to the body's method before the server
// reads it.
func mcpMethodIgnored(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Method == http.MethodPost {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			replaceBody(r, b)
			var msg struct{ Method string }
			if json.Unmarshal(b, &msg) == nil && msg.Method != "" {
				r.Header.Set("Mcp-Method", msg.Method)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// tokenResourceIgnored redeems a code for the resource its grant named,
// whatever resource the token request asks for (RFC 8707 §2.2 unread).
func tokenResourceIgnored(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route("POST", "/oauth/token")(r) {
			if f := formOf(r); f.Get("grant_type") == "authorization_code" && f.Has("resource") {
				f.Del("resource")
				replaceBody(r, []byte(f.Encode()))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// implicitGranted issues an access token in the fragment: the implicit
// grant.
var implicitGranted = implicitAnswer(func(q url.Values) url.Values {
	return url.Values{"access_token": {"implicit-" + q.Get("state")}, "token_type": {"Bearer"}, "state": {q.Get("state")}}
})

// errorForwardedToAnyRedirect sends a refused authorization request to a
// page of the server's own that forwards the error to the request's
// redirect URI, registered or not: an open redirect one hop away.
func errorForwardedToAnyRedirect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/forward" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		rewriteResponse(route("GET", "/oauth/authorize"), func(r *http.Request, res *faultResponse) {
			q := r.URL.Query()
			if res.status == http.StatusBadRequest && q.Get("redirect_uri") != "" {
				to := q.Get("redirect_uri") + "?" + url.Values{"error": {"invalid_request"}, "state": {q.Get("state")}}.Encode()
				res.status, res.body = http.StatusFound, nil
				res.header.Set("Location", "/oauth/forward?"+url.Values{"to": {to}}.Encode())
			}
		})(next).ServeHTTP(w, r)
	})
}
