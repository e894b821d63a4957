package conformance

import (
	"bytes"
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

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Authorization servers that behave as real ones the suite met do, built
// from the reference server by middleware: each is legitimate, and a
// correct MCP client gets through all of them.

// readForm reads a form body and puts it back for the next handler.
func readForm(r *http.Request) url.Values {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	f, _ := url.ParseQuery(string(b))
	return f
}

// setForm replaces the request's form body.
func setForm(r *http.Request, f url.Values) {
	b := []byte(f.Encode())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	r.Header.Del("Content-Length")
}

// served runs next on r and returns what it answered, to pass on or edit.
func served(next http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	return rec
}

func forward(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// grantReplacer replaces the user's grant to a client on each sign-in, as
// Cloudflare's workers-oauth-provider does by default: a new authorization
// of the same client (the test user is the only user) revokes the codes
// and tokens that client was issued before.
type grantReplacer struct {
	mu     sync.Mutex
	gen    map[string]int      // client_id → its current grant
	issued map[string]grantRef // codes, access and refresh tokens → their grant
}

type grantRef struct {
	client string
	gen    int
}

func newGrantReplacer() *grantReplacer {
	return &grantReplacer{gen: map[string]int{}, issued: map[string]grantRef{}}
}

// replaced reports whether secret belongs to a grant replaced since.
func (g *grantReplacer) replaced(secret string) (grantRef, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ref, ok := g.issued[secret]
	return ref, ok && ref.gen < g.gen[ref.client]
}

func (g *grantReplacer) record(ref grantRef, secrets ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range secrets {
		if s != "" {
			g.issued[s] = ref
		}
	}
}

func (g *grantReplacer) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/oauth/authorize":
			client := readForm(r).Get("client_id")
			rec := served(next, r)
			if loc, err := url.Parse(rec.Header().Get("Location")); err == nil && loc.Query().Get("code") != "" {
				g.mu.Lock()
				g.gen[client]++
				g.issued[loc.Query().Get("code")] = grantRef{client, g.gen[client]}
				g.mu.Unlock()
			}
			forward(w, rec)
		case r.Method == http.MethodPost && r.URL.Path == "/oauth/token":
			f := readForm(r)
			presented := f.Get("code")
			if f.Get("grant_type") == "refresh_token" {
				presented = f.Get("refresh_token")
			}
			ref, stale := g.replaced(presented)
			if stale {
				oauthError(w, http.StatusBadRequest, "invalid_grant", "Grant not found")
				return
			}
			rec := served(next, r)
			var tok struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
			}
			if ref.client != "" && rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &tok) == nil {
				g.record(ref, tok.AccessToken, tok.RefreshToken)
			}
			forward(w, rec)
		case r.URL.Path == "/mcp" && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "):
			if _, stale := g.replaced(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")); stale {
				r.Header.Set("Authorization", "Bearer revoked-by-a-later-sign-in") // the server's own 401
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// startAS starts the reference server wrapped by wrap and returns its MCP
// URL and store.
func startAS(t *testing.T, wrap func(http.Handler) http.Handler) (string, store.Store) {
	t.Helper()
	st := memory.New()
	// A sign-in budget for several runs with one client (--client-id).
	limits := server.Limits{AuthorizePerClient: server.Limit{Rate: 50, Burst: 1000}}
	inst, err := local.Start(context.Background(), local.Options{Store: st, Wrap: wrap, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst.URL + "/mcp", st
}

// mcpVerdicts runs the mcp profile with args and returns its report.
func mcpVerdicts(t *testing.T, env map[string]string, mcpURL string, args ...string) (result, jsonReport) {
	t.Helper()
	res := runCmd(t, env, nil, append([]string{"--profile", "mcp", mcpURL, "--approve=form", "--json", "-"}, args...)...)
	return res, readJSONReport(t, []byte(res.stdout))
}

// wantReferenceVerdicts fails on any verdict the reference server would
// not get: everything passes but the metadata document checks (no
// --cimd-private), the expiry checks (no test clock) and what skip allows.
func wantReferenceVerdicts(t *testing.T, what string, rep jsonReport, skip func(id, reason string) bool) {
	t.Helper()
	for _, c := range rep.Checks {
		noClock := strings.Contains(c.Reason, "needs a test clock")
		ok := c.Verdict == "pass" || c.Verdict == "skip" && (strings.Contains(c.Reason, "--cimd-private") || noClock || skip != nil && skip(c.ID, c.Reason))
		if !ok {
			t.Errorf("%s: %s %s: %s", what, c.ID, c.Verdict, c.Reason)
		}
	}
}

// A server that replaces the user's grant on each sign-in gives the same
// verdicts however many checks run at once: each check that signs in has
// a client of its own. (Sharing one client, 3–7 checks failed at
// --parallel 8 with "Grant not found", different ones each run.)
func TestGrantReplacingServerSameVerdictsAtAnyParallelism(t *testing.T) {
	mcpURL, _ := startAS(t, newGrantReplacer().wrap)
	var first map[string]string
	for run := range 4 {
		parallel := []string{"1", "8", "8", "8"}[run]
		res, rep := mcpVerdicts(t, nil, mcpURL, "--parallel", parallel)
		if res.code != 0 {
			t.Errorf("--parallel %s: exit %d\n%s", parallel, res.code, res.stderr)
		}
		wantReferenceVerdicts(t, "--parallel "+parallel, rep, nil)
		t.Logf("--parallel %s: %+v", parallel, rep.Summary)
		v := verdicts(rep)
		if first == nil {
			first = v
			continue
		}
		for id, want := range first {
			if v[id] != want {
				t.Errorf("run %d, --parallel %s: %s %s, --parallel 1 gave %s", run, parallel, id, v[id], want)
			}
		}
	}
}

// nativeOnlyDefaultScopes is an authorization server that takes a client
// registered without application_type for a web client, which may not use
// http loopback redirect URIs (better-auth), and gives a client registered
// without scope only its default scopes, refusing it mcp (Hydra).
type nativeOnlyDefaultScopes struct {
	mu          sync.Mutex
	defaultOnly map[string]bool
	mcpTokens   int // token responses granting mcp
}

func (n *nativeOnlyDefaultScopes) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/oauth/register":
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var md struct {
				RedirectURIs    []string `json:"redirect_uris"`
				ApplicationType string   `json:"application_type"`
				Scope           *string  `json:"scope"`
			}
			if json.Unmarshal(b, &md) == nil && md.ApplicationType != "native" {
				for _, u := range md.RedirectURIs {
					if strings.HasPrefix(u, "http://127.0.0.1") || strings.HasPrefix(u, "http://localhost") {
						oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "a web client needs https redirect URIs")
						return
					}
				}
			}
			rec := served(next, r)
			var ci struct {
				ClientID string `json:"client_id"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &ci) == nil && ci.ClientID != "" && md.Scope == nil {
				n.mu.Lock()
				n.defaultOnly[ci.ClientID] = true
				n.mu.Unlock()
			}
			forward(w, rec)
		case r.URL.Path == "/oauth/authorize":
			q := r.URL.Query()
			if r.Method == http.MethodPost {
				q = readForm(r)
			}
			n.mu.Lock()
			refuse := n.defaultOnly[q.Get("client_id")] && strings.Contains(" "+q.Get("scope")+" ", " mcp ")
			n.mu.Unlock()
			if refuse {
				http.Redirect(w, r, q.Get("redirect_uri")+"?error=invalid_scope&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
				return
			}
			next.ServeHTTP(w, r)
		case r.Method == http.MethodPost && r.URL.Path == "/oauth/token":
			rec := served(next, r)
			var tok struct {
				Scope string `json:"scope"`
			}
			if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &tok) == nil && strings.Contains(" "+tok.Scope+" ", " mcp ") {
				n.mu.Lock()
				n.mcpTokens++
				n.mu.Unlock()
			}
			forward(w, rec)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// The suite registers as an MCP client must: native, with the scopes the
// resource advertises; so both servers above issue it mcp-scoped tokens.
func TestRegistersNativeWithAdvertisedScopes(t *testing.T) {
	as := &nativeOnlyDefaultScopes{defaultOnly: map[string]bool{}}
	mcpURL, _ := startAS(t, as.wrap)
	res, rep := mcpVerdicts(t, nil, mcpURL)
	if res.code != 0 {
		t.Errorf("exit %d\n%s", res.code, res.stderr)
	}
	wantReferenceVerdicts(t, "native and default scopes", rep, nil)
	if as.mcpTokens == 0 {
		t.Error("no token response granted mcp")
	}
}

// A refused registration is one finding, MCP-10's; every check that
// needed a registered client says it is blocked by it, and none fails.
func TestRefusedRegistrationBlocksInsteadOfFailing(t *testing.T) {
	mcpURL, _ := startAS(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/oauth/register" {
				oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "registration is closed")
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	res, rep := mcpVerdicts(t, nil, mcpURL)
	var fails []string
	blocked := 0
	for _, c := range rep.Checks {
		switch c.Verdict {
		case "fail":
			fails = append(fails, c.ID)
		case "blocked":
			blocked++
			if !strings.HasPrefix(c.Reason, "blocked by MCP-10: ") || !strings.Contains(c.Reason, "registration is closed") {
				t.Errorf("%s: blocked %q, want blocked by MCP-10 with the server's words", c.ID, c.Reason)
			}
		}
	}
	if len(fails) != 1 || fails[0] != "MCP-10" || res.code != 8 {
		t.Errorf("exit %d, failed %v; want 8 and MCP-10 alone", res.code, fails)
	}
	if blocked < 40 || !strings.Contains(res.stderr, " blocked in ") {
		t.Errorf("%d blocked checks, want every check that signs in; summary:\n%s", blocked, res.stderr)
	}
	t.Logf("refused registration: %+v, %d blocked", rep.Summary, blocked)
}

// confidentialNoRegistration has no dynamic registration (Dex) and knows
// clients the test creates in its store; the client named confidential
// authenticates at the token and revocation endpoints with secret.
func confidentialNoRegistration(confidential, secret string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/oauth/register":
				http.NotFound(w, r)
			case strings.HasPrefix(r.URL.Path, "/.well-known/"):
				rec := served(next, r)
				var m map[string]any
				if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m["issuer"] != nil {
					delete(m, "registration_endpoint")
					b, _ := json.Marshal(m)
					rec.Body = bytes.NewBuffer(b)
					rec.Header().Del("Content-Length")
				}
				forward(w, rec)
			case r.Method == http.MethodPost && (r.URL.Path == "/oauth/token" || r.URL.Path == "/oauth/revoke"):
				f := readForm(r)
				user, pass, basic := r.BasicAuth()
				if basic {
					user, _ = url.QueryUnescape(user)
					pass, _ = url.QueryUnescape(pass)
				}
				if basic && user == confidential || f.Get("client_id") == confidential {
					if !basic || pass != secret {
						oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
						return
					}
					r.Header.Del("Authorization") // on to the reference server as the public client it is there
					f.Set("client_id", user)
					setForm(r, f)
				}
				next.ServeHTTP(w, r)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// With --client-id the code-flow checks run against a server without
// dynamic registration; the registration checks are skipped saying why, and
// so are those that need a second client until --client-id-2 gives one.
// The secret comes from the environment, never argv. The server also
// replaces grants on each sign-in: the shared client's checks run one at a
// time, so --parallel 8 changes nothing.
func TestPreRegisteredClient(t *testing.T) {
	const secret = "s3cret-of-the-confidential-client"
	replacer := newGrantReplacer()
	mcpURL, st := startAS(t, func(next http.Handler) http.Handler {
		return confidentialNoRegistration("confidential", secret)(replacer.wrap(next))
	})
	for _, id := range []string{"confidential", "second"} {
		err := st.CreateClient(context.Background(), store.Client{ID: id, Name: id, RedirectURIs: []string{"http://127.0.0.1:43117/callback"},
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, Scope: "mcp offline_access",
			TokenEndpointAuthMethod: "none", ApplicationType: "native", CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"MCPAUTH_CLIENT_SECRET": secret}
	registration := map[string]bool{"MCP-10": true, "MCP-37": true, "MCP-38": true, "MCP-39": true, "MCP-40": true, "MCP-41": true}
	secondClient := map[string]bool{"MCP-63": true, "MCP-69": true}

	// Without dynamic registration, and no client given: the code flow
	// cannot run. (login's secret in the environment belongs to no client
	// here, and is no usage error.)
	_, rep := mcpVerdicts(t, env, mcpURL, "--run", "^MCP-07$")
	if v := rep.Checks[0]; v.Verdict != "skip" || !strings.Contains(v.Reason, "--client-id") {
		t.Errorf("no client: MCP-07 %s %q, want a skip naming --client-id", v.Verdict, v.Reason)
	}

	res, rep := mcpVerdicts(t, env, mcpURL, "--client-id", "confidential", "--parallel", "8")
	if res.code != 0 || strings.Contains(res.stderr, secret) || strings.Contains(res.stdout, secret) {
		t.Errorf("--client-id: exit %d (or the secret was printed)\n%s", res.code, res.stderr)
	}
	wantReferenceVerdicts(t, "--client-id", rep, func(id, reason string) bool {
		return registration[id] && strings.Contains(reason, "pre-registered") ||
			secondClient[id] && strings.Contains(reason, "--client-id-2")
	})
	v := verdicts(rep)
	for _, id := range []string{"MCP-07", "MCP-54", "MCP-60", "MCP-12", "MCP-70"} {
		if v[id] != "pass" {
			t.Errorf("--client-id: %s %s, want pass", id, v[id])
		}
	}
	for id := range registration {
		if v[id] != "skip" {
			t.Errorf("--client-id: %s %s, want skip", id, v[id])
		}
	}

	res, rep = mcpVerdicts(t, env, mcpURL, "--client-id", "confidential", "--client-id-2", "second", "--parallel", "8")
	if res.code != 0 {
		t.Errorf("--client-id-2: exit %d\n%s", res.code, res.stderr)
	}
	wantReferenceVerdicts(t, "--client-id-2", rep, func(id, reason string) bool { return registration[id] })
	for id := range secondClient {
		if got := verdicts(rep)[id]; got != "pass" {
			t.Errorf("--client-id-2: %s %s, want pass", id, got)
		}
	}

	// The wrong secret: the server refuses the client, once, as MCP-07's
	// finding; the other code-flow checks are blocked by it.
	res, rep = mcpVerdicts(t, map[string]string{"MCPAUTH_CLIENT_SECRET": "wrong"}, mcpURL, "--client-id", "confidential", "--run", "^MCP-(07|54|60|66)$")
	v = verdicts(rep)
	if res.code != 8 || v["MCP-07"] != "fail" || v["MCP-60"] != "blocked" || v["MCP-66"] != "blocked" {
		t.Errorf("wrong secret: exit %d, %v; want MCP-07 failed and MCP-60, MCP-66 blocked", res.code, v)
	}
}
