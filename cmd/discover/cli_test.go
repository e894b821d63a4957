package discover_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestDiscoverReferenceServerGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	code, stdout, stderr := c.Run("discover", env.URL+"/mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	clitest.Golden(t, "discover.txt", stdout)

	code, stdout, _ = c.Run("discover", env.URL+"/mcp", "-o", "json")
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
	clitest.Golden(t, "discover.json", stdout)
}

// longHost is an authorization server's name as long as real ones get.
const longHost = "login.eu-west-1.identity.example-corporation.com"

// longURLs serves an MCP server at a long path on plain loopback HTTP whose
// metadata names an authorization server at https://longHost/tenants/acme:
// a TLS server on loopback that client reaches for longHost, trusting its
// certificate for that name.
func longURLs(t *testing.T) (mcp string, client *http.Client) {
	as := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const iss = "https://" + longHost + "/tenants/acme"
		if r.URL.Path != "/.well-known/oauth-authorization-server/tenants/acme" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss, "authorization_endpoint": iss + "/oauth2/v1/authorize", "token_endpoint": iss + "/oauth2/v1/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"mcp:tools", "mcp:resources", "offline_access"},
		})
	}))
	as.StartTLS()
	t.Cleanup(as.Close)
	tr := as.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.ServerName = "example.com" // a name the test certificate holds
	dialer := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, longHost+":") {
			addr = as.Listener.Addr().String()
		}
		return dialer.DialContext(ctx, network, addr)
	}
	const path, prm = "/some/long/path/mcp", "/.well-known/oauth-protected-resource/some/long/path/mcp"
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case path:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+prm+`"`)
			w.WriteHeader(http.StatusUnauthorized)
		case prm:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + path, "authorization_servers": []string{"https://" + longHost + "/tenants/acme"}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + path, &http.Client{Transport: tr}
}

// Output fits COLUMNS, the same on a pipe and a terminal, with long real
// URLs: the resource and issuer whole, each probe URL with its .well-known
// path whole (a long host gives way in its middle), no line wider than
// the width; JSON the same whatever the width.
func TestDiscoverFitsWidth(t *testing.T) {
	mcp, client := longURLs(t)
	var js string
	for _, width := range []int{80, 120} {
		for _, tty := range []bool{false, true} {
			c := clitest.New(t, nil)
			c.Vars["COLUMNS"] = strconv.Itoa(width)
			c.Wrap = func(f *cmdutil.Factory) {
				f.IO.StdoutTTY = tty
				f.HTTPClient = func() (*http.Client, error) { return client, nil }
			}
			code, stdout, stderr := c.Run("discover", mcp)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if w := tablefmt.Widest(stdout); w > width || strings.Contains(stdout, "\x1b") {
				t.Fatalf("widest line %d (or ANSI) at COLUMNS=%d:\n%s", w, width, stdout)
			}
			for _, whole := range []string{mcp, "https://" + longHost + "/tenants/acme\n", "/.well-known/oauth-authorization-server/tenants/acme\n",
				strings.Replace(mcp, "/some/", "/.well-known/oauth-protected-resource/some/", 1) + "\n"} {
				if !strings.Contains(stdout, whole) {
					t.Errorf("COLUMNS=%d tty=%v: %s is not whole:\n%s", width, tty, whole, stdout)
				}
			}
			clitest.Golden(t, fmt.Sprintf("discover-%d.txt", width), stdout)
			_, out, _ := c.Run("discover", mcp, "-o", "json")
			if js != "" && out != js {
				t.Errorf("COLUMNS=%d: the JSON changed with the width", width)
			}
			js = out
		}
	}
}

// A closed port refuses the first probe: discovery stops there, and the
// one line of the error is all the text output says; the JSON keeps that
// probe. An authorization server on a closed port is probed once too.
func TestDiscoverStopsAtARefusal(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadBase := "http://" + dead.Addr().String()
	dead.Close()
	c := clitest.New(t, nil)
	code, stdout, stderr := c.Run("discover", deadBase+"/some/long/path/mcp")
	if code != clierr.ExitNetwork || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "connection refused") {
		t.Errorf("closed port: exit %d, stdout %q, stderr %q; want exit 6 and one line", code, stdout, stderr)
	}
	_, js, _ := c.Run("discover", deadBase+"/mcp", "-o", "json")
	if probes := probeURLs(t, js); len(probes) != 1 {
		t.Errorf("closed port: probes %q, want the first alone", probes)
	}

	srv := otherServer(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource/mcp": func(base string) any {
			return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{deadBase}}
		},
	})
	code, stdout, _ = c.Run("discover", srv.URL+"/mcp", "-o", "json")
	var toDead []string
	for _, u := range probeURLs(t, stdout) {
		if strings.HasPrefix(u, deadBase) {
			toDead = append(toDead, u)
		}
	}
	if code != clierr.ExitNetwork || len(toDead) != 1 {
		t.Errorf("authorization server on a closed port: exit %d, probes there %q, want one", code, toDead)
	}
}

func probeURLs(t *testing.T, js string) []string {
	t.Helper()
	var d struct {
		Probes []struct{ URL string } `json:"probes"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	var urls []string
	for _, p := range d.Probes {
		urls = append(urls, p.URL)
	}
	return urls
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
			c := clitest.New(t, nil)
			code, stdout, stderr := c.Run("discover", srv.URL+"/mcp", "-o", "json")
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
	c := clitest.New(t, nil)
	code, _, stderr := c.Run("discover", srv.URL+"/mcp")
	if code == 0 || !strings.Contains(stderr, "S256") || !strings.Contains(stderr, "pass --allow-missing-s256 to continue anyway") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, _ := c.Run("discover", srv.URL+"/mcp", "--allow-missing-s256"); code != 0 {
		t.Fatalf("override: exit %d", code)
	}
}

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
	c := clitest.New(t, nil)
	if code, _, stderr := c.Run("discover", srv.URL+"/mcp"); code != clierr.ExitNetwork || !strings.Contains(stderr, "certificate") || !strings.Contains(stderr, "pass --ca-file") {
		t.Fatalf("unknown CA: exit %d: %s", code, stderr)
	}
	if code, _, stderr := c.Run("discover", srv.URL+"/mcp", "--ca-file", caFile); code != 0 {
		t.Fatalf("--ca-file: exit %d: %s", code, stderr)
	}
	c.Vars["MCPAUTH_CA_FILE"] = caFile
	if code, _, stderr := c.Run("discover", srv.URL+"/mcp"); code != 0 {
		t.Fatalf("MCPAUTH_CA_FILE: exit %d: %s", code, stderr)
	}
	if code, _, _ := c.Run("discover", srv.URL+"/mcp", "--ca-file", filepath.Join(t.TempDir(), "none.pem")); code != clierr.ExitUsage {
		t.Fatalf("missing --ca-file: exit %d, want 2", code)
	}
}
