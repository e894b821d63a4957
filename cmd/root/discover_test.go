package root_test

import (
	"encoding/json"
	"encoding/pem"
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name after replacing each digit of a
// loopback port with X (keeping table columns aligned), so the files are
// stable across runs; -update rewrites them. Ephemeral ports have 5 digits
// on Linux, macOS and Windows. Times are already fixed: the server's and
// the CLI's clocks start at servertest.Start.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllStringFunc(got, func(hostPort string) string {
		return "127.0.0.1:" + strings.Repeat("X", len(hostPort)-len("127.0.0.1:"))
	})
	// Random user ids likewise, keeping their length.
	got = regexp.MustCompile(`u_[0-9A-Za-z_-]{16}`).ReplaceAllStringFunc(got, func(id string) string { return "u_" + strings.Repeat("X", len(id)-2) })
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestDiscoverReferenceServerGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	code, stdout, stderr := c.run("discover", env.URL+"/mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "discover.txt", stdout)

	code, stdout, _ = c.run("discover", env.URL+"/mcp", "-o", "json")
	var d struct {
		Resource string `json:"resource"`
		Issuer   string `json:"issuer"`
		Probes   []struct {
			URL     string `json:"url"`
			Status  int    `json:"status"`
			Verdict string `json:"verdict"`
		} `json:"probes"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &d) != nil {
		t.Fatalf("json: %d %s", code, stdout)
	}
	if d.Resource != env.URL+"/mcp" || d.Issuer != env.URL || len(d.Probes) == 0 || d.Probes[0].Status != 401 {
		t.Fatalf("discovery %+v", d)
	}
	golden(t, "discover.json", stdout)
}

// otherServer simulates servers other than the reference server (which
// serves every document): an MCP endpoint that gives no challenge hint, and
// metadata only where paths says.
func otherServer(t *testing.T, paths map[string]func(base string) any) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if doc, ok := paths[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(doc(srv.URL))
			return
		}
		if r.URL.Path == "/mcp" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func asMetadata(base string) any {
	return map[string]any{
		"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
		"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
	}
}

func TestDiscoverFallbacks(t *testing.T) {
	prm := func(base string) any {
		return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}
	}
	tests := []struct {
		name  string
		paths map[string]func(string) any
		want  string // the probe that must succeed
	}{
		{"root PRM only", map[string]func(string) any{
			"/.well-known/oauth-protected-resource":   prm,
			"/.well-known/oauth-authorization-server": asMetadata,
		}, "/.well-known/oauth-protected-resource"},
		{"OpenID Connect discovery only", map[string]func(string) any{
			"/.well-known/oauth-protected-resource/mcp": prm,
			"/.well-known/openid-configuration":         asMetadata,
		}, "/.well-known/openid-configuration"},
		// MCP 2025-03-26 servers: no protected resource metadata at all.
		{"authorization server metadata only", map[string]func(string) any{
			"/.well-known/oauth-authorization-server": asMetadata,
		}, "/.well-known/oauth-authorization-server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := otherServer(t, tt.paths)
			c := newCLI(t, nil)
			code, stdout, stderr := c.run("discover", srv.URL+"/mcp", "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, stdout, stderr)
			}
			var d struct {
				Issuer string `json:"issuer"`
				Probes []struct {
					URL, Verdict string
				} `json:"probes"`
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, p := range d.Probes {
				if p.URL == srv.URL+tt.want && p.Verdict == "ok" {
					ok = true
				}
			}
			if !ok || d.Issuer != srv.URL {
				t.Fatalf("probes %+v", d.Probes)
			}
		})
	}
}

func TestDiscoverRefusesServerWithoutS256(t *testing.T) {
	srv := otherServer(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource": func(base string) any {
			return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}
		},
		"/.well-known/oauth-authorization-server": func(base string) any {
			m := asMetadata(base).(map[string]any)
			m["code_challenge_methods_supported"] = []string{"plain"}
			return m
		},
	})
	c := newCLI(t, nil)
	code, _, stderr := c.run("discover", srv.URL+"/mcp")
	if code == 0 || !strings.Contains(stderr, "S256") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, _ := c.run("discover", srv.URL+"/mcp", "--allow-missing-s256"); code != 0 {
		t.Fatalf("override: exit %d", code)
	}
}

func TestStatusGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.clock = &fixedClock{env.Clock}
	c.open = approvingBrowser(t, env, "hana", "approve")
	if code, _, stderr := c.run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	code, stdout, stderr := c.run("status")
	if code != 0 || !strings.Contains(stderr, "protected only by file permissions") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "status.txt", stdout)
	code, stdout, stderr = c.run("status", "-o", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	golden(t, "status.json", stdout)
	if code, stdout, _ := c.run("status", "--account", "nobody"); code != 0 || !strings.Contains(stdout, "default") {
		t.Fatalf("status lists every account: %s", stdout)
	}
}

// fixedClock reads the server's fake clock and waits for real.
type fixedClock struct{ c *clock.Fake }

func (f *fixedClock) Now() time.Time                         { return f.c.Now() }
func (f *fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// --ca-file adds roots: a server with a certificate from an unknown CA is
// refused (exit 6) until its CA is given.
func TestCAFile(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource":
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(asMetadata(srv.URL))
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, nil)
	if code, _, stderr := c.run("discover", srv.URL+"/mcp"); code != cmdutil.ExitNetwork || !strings.Contains(stderr, "certificate") {
		t.Fatalf("unknown CA: exit %d: %s", code, stderr)
	}
	if code, _, stderr := c.run("discover", srv.URL+"/mcp", "--ca-file", caFile); code != 0 {
		t.Fatalf("--ca-file: exit %d: %s", code, stderr)
	}
	c.vars["MCPAUTH_CA_FILE"] = caFile
	if code, _, stderr := c.run("discover", srv.URL+"/mcp"); code != 0 {
		t.Fatalf("MCPAUTH_CA_FILE: exit %d: %s", code, stderr)
	}
	if code, _, _ := c.run("discover", srv.URL+"/mcp", "--ca-file", filepath.Join(t.TempDir(), "none.pem")); code != cmdutil.ExitUsage {
		t.Fatalf("missing --ca-file: exit %d, want 2", code)
	}
}
