package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// The test user's secrets never need argv: standard input, a file or the
// environment.
func TestSecretsOffTheCommandLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cookie")
	if err := os.WriteFile(file, []byte("cookie-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args        []string
		stdin       string
		env         map[string]string
		key, cookie string
	}{
		{[]string{"--api-key", "-", "--session-cookie-file", file}, "key-from-stdin\n", nil, "key-from-stdin", "cookie-from-file"},
		{nil, "", map[string]string{"MCPAUTH_API_KEY": "key-from-env", "MCPAUTH_SESSION_COOKIE_FILE": file}, "key-from-env", "cookie-from-file"},
	} {
		ios := &cmdutil.IOStreams{In: strings.NewReader(tt.stdin), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		f := cmdutil.New(ios, func(k string) string { return tt.env[k] })
		var got *Options
		cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(append([]string{"http://127.0.0.1:8080"}, tt.args...))
		if err := cmd.Execute(); err != nil || got == nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got.APIKey != tt.key || got.SessionCookie != tt.cookie {
			t.Errorf("%v: api key %q, cookie %q", tt.args, got.APIKey, got.SessionCookie)
		}
	}
}

// wrongGrants are the refusals the hostile server turns into grants: a
// code_verifier that does not match, a replayed code, an unknown grant.
var wrongGrants = []string{`"error":"invalid_grant"`, `"error":"unsupported_grant_type"`}

// issuedSecrets is a hostile authorization server built on the reference
// one: it grants what it must refuse (tokens served as text/plain), nests a
// copy of every access token inside another object, answers registration
// with a registration_access_token, and records every secret it hands out.
type issuedSecrets struct {
	mu     sync.Mutex
	values map[string]bool
	grants int // refusals turned into grants
}

func (s *issuedSecrets) mint(prefix string) string {
	v := prefix + "-" + rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[v] = true
	return v
}

func (s *issuedSecrets) wrap(next http.Handler) http.Handler {
	isPost := func(path string) func(*http.Request) bool {
		return func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == path }
	}
	h := rewriteAnswer(next, isPost("/oauth/token"), func(status int, h http.Header, body []byte) (int, []byte) {
		if status == http.StatusOK {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				m["issued"] = map[string]any{"grant": map[string]any{"access_token": s.mint("nested")}}
				body, _ = json.Marshal(m)
			}
			return status, body
		}
		for _, e := range wrongGrants {
			if bytes.Contains(body, []byte(e)) {
				s.mu.Lock()
				s.grants++
				s.mu.Unlock()
				h.Set("Content-Type", "text/plain; charset=utf-8")
				grant, _ := json.MarshalIndent(map[string]any{"access_token": s.mint("wrong-at"), "refresh_token": s.mint("wrong-rt"),
					"token_type": "Bearer", "expires_in": 86400, "issued": map[string]any{"access_token": s.mint("wrong-nested")}}, "", "  ")
				return http.StatusOK, grant
			}
		}
		return status, body
	})
	h = rewriteAnswer(h, isPost("/oauth/register"), func(status int, h http.Header, body []byte) (int, []byte) {
		var m map[string]any
		if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
			m["registration_access_token"] = s.mint("rat")
			body, _ = json.Marshal(m)
		}
		return status, body
	})
	// Every answer, the edited ones included: the reference server's own
	// tokens, codes, cookies and API keys are secrets too.
	return rewriteAnswer(h, func(r *http.Request) bool { return !(r.Method == http.MethodGet && r.URL.Path == "/mcp") },
		func(status int, h http.Header, body []byte) (int, []byte) {
			s.record(h, body)
			return status, body
		})
}

var apiKeyPattern = regexp.MustCompile(`mcpa_[0-9A-Za-z]+`)

// record keeps the secrets of one answer: token members at any depth, the
// code of a redirect, cookie values and API keys.
func (s *issuedSecrets) record(h http.Header, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if str, ok := x.(string); ok && slices.Contains([]string{"access_token", "refresh_token", "id_token",
					"registration_access_token", "client_secret", "device_code"}, k) && str != "" {
					s.values[str] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var doc any
	if json.Unmarshal(body, &doc) == nil {
		walk(doc)
	}
	if u, err := url.Parse(h.Get("Location")); err == nil && u.Query().Get("code") != "" {
		s.values[u.Query().Get("code")] = true
	}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if len(c.Value) >= 8 {
			s.values[c.Value] = true
		}
	}
	for _, k := range apiKeyPattern.FindAll(body, -1) {
		s.values[string(k)] = true
	}
}

// minted reports whether the server handed out a secret of its own kind.
func (s *issuedSecrets) minted(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for v := range s.values {
		if strings.HasPrefix(v, prefix) {
			return true
		}
	}
	return false
}

// leaks counts the occurrences of issued secrets in out.
func (s *issuedSecrets) leaks(out string) (n int, example string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for v := range s.values {
		if c := strings.Count(out, v); c > 0 {
			n += c
			i := strings.Index(out, v)
			example = out[max(i-80, 0):min(i+len(v)+20, len(out))]
		}
	}
	return n, example
}

// A server that wrongly grants gets failures in every report format, and no
// report carries a secret it issued, wrongly or not: CI jobs upload them.
func TestReportsCarryNoIssuedSecret(t *testing.T) {
	for _, profile := range []string{conformance.ProfileContract, conformance.ProfileMCP} {
		t.Run(profile, func(t *testing.T) {
			s := &issuedSecrets{values: map[string]bool{}}
			inst, err := local.Start(context.Background(), local.Options{Store: memory.New(), TestClock: clock.NewOffset(nil), Wrap: s.wrap})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inst.Close() })
			dir := t.TempDir()
			files := map[string]string{"json": filepath.Join(dir, "r.json"), "junit": filepath.Join(dir, "r.xml"), "html": filepath.Join(dir, "r.html")}
			target := inst.URL
			if profile == conformance.ProfileMCP {
				target += "/mcp"
			}
			res := runCmd(t, nil, nil, "--profile", profile, target, "--approve=form", "--clock-url", inst.URL+"/api/test/clock",
				"--json", files["json"], "--junit", files["junit"], "--html", files["html"])
			if res.code != clierr.ExitCheckFailed {
				t.Fatalf("exit %d, want %d\n%s", res.code, clierr.ExitCheckFailed, res.stderr)
			}
			outputs := map[string]string{"text": res.stdout + res.stderr}
			for format, path := range files {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				outputs[format] = string(b)
			}
			if s.grants == 0 || !s.minted("rat-") || !s.minted("nested-") {
				t.Fatalf("%d wrongful grants, registration access tokens %v, nested tokens %v: the hostile server was not exercised",
					s.grants, s.minted("rat-"), s.minted("nested-"))
			}
			t.Logf("%d wrongful grants, %d secrets issued", s.grants, len(s.values))
			for _, format := range []string{"text", "json", "junit", "html"} {
				n, example := s.leaks(outputs[format])
				t.Logf("%s: %d occurrences of issued secrets", format, n)
				if n > 0 {
					t.Errorf("%s report: %d occurrences of issued secrets, e.g. …%s…", format, n, example)
				}
			}
			if !strings.Contains(res.stdout, "granted a token: access_token=[redacted ") {
				t.Errorf("no reason says a token was granted wrongly:\n%s", res.stdout)
			}
		})
	}
}
