package flows_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// challenge401 answers like an MCP server that wants a token.
func challenge401(header string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if header != "" {
			w.Header().Set("WWW-Authenticate", header)
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}
}

func probeURLs(d *flows.Discovery) []string {
	var out []string
	for _, p := range d.Probes {
		out = append(out, fmt.Sprintf("%s %d %s", p.URL, p.Status, p.Verdict))
	}
	return out
}

func findProbe(t *testing.T, d *flows.Discovery, url string) flows.Probe {
	t.Helper()
	for _, p := range d.Probes {
		if p.URL == url {
			return p
		}
	}
	t.Fatalf("no probe for %s in %v", url, probeURLs(d))
	return flows.Probe{}
}

func TestDiscoverChallengeHint(t *testing.T) {
	srv, mux := newServer(t)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			t.Errorf("probe: %s Accept=%q, want an MCP POST", r.Method, r.Header.Get("Accept"))
		}
		challenge401(`Bearer realm="mcp", resource_metadata="`+srv.URL+`/meta/prm", scope="mcp files:read"`)(w, r)
	})
	mux.HandleFunc("/meta/prm", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, prmDoc(srv.URL+"/mcp", srv.URL))
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("well-known PRM probed although the challenge named the metadata")
		http.NotFound(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(srv.URL, srv.URL)))

	d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
	if err != nil {
		t.Fatalf("Discover: %v (probes %v)", err, probeURLs(d))
	}
	if d.ResourceMetadataURL != srv.URL+"/meta/prm" {
		t.Errorf("ResourceMetadataURL = %q", d.ResourceMetadataURL)
	}
	if d.ChallengeScope != "mcp files:read" || d.Scope != "mcp files:read" {
		t.Errorf("ChallengeScope %q Scope %q, want the challenge's scope", d.ChallengeScope, d.Scope)
	}
	if d.Resource != srv.URL+"/mcp" || d.Issuer != srv.URL || d.AuthServer.TokenEndpoint != srv.URL+"/oauth/token" {
		t.Errorf("got resource %q issuer %q token %q", d.Resource, d.Issuer, d.AuthServer.TokenEndpoint)
	}
	if p := findProbe(t, d, srv.URL+"/mcp"); p.Status != 401 {
		t.Errorf("MCP probe status %d, want 401", p.Status)
	}
	if d.Legacy {
		t.Error("Legacy set although PRM was found")
	}
}

func TestDiscoverFallbacks(t *testing.T) {
	type setup func(t *testing.T, base string, mux *http.ServeMux)
	tests := []struct {
		name      string
		setup     setup
		target    func(base string) string
		wantPRM   string // path of the PRM used, "" for legacy
		wantASM   string // path of the AS metadata used
		wantIss   func(base string) string
		wantScope string
		wantProbe map[string]string // path -> verdict prefix
	}{
		{
			name: "only path-inserted PRM",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/mcp", challenge401(`Bearer realm="x"`))
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(base+"/mcp", base)))
				mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(base, base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource/mcp", wantASM: "/.well-known/oauth-authorization-server",
			wantScope: "mcp",
		},
		{
			name: "only root PRM, MCP endpoint without challenge",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource", serveJSON(prmDoc(base+"/mcp", base)))
				mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(base, base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource", wantASM: "/.well-known/oauth-authorization-server",
			wantScope: "mcp",
			wantProbe: map[string]string{"/mcp": "no Bearer challenge", "/.well-known/oauth-protected-resource/mcp": "HTTP 404"},
		},
		{
			name: "RFC 8414 path-inserted, issuer with a path",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(base+"/mcp", base+"/auth/tenant")))
				mux.HandleFunc("/.well-known/oauth-authorization-server/auth/tenant", serveJSON(asMeta(base+"/auth/tenant", base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource/mcp", wantASM: "/.well-known/oauth-authorization-server/auth/tenant",
			wantIss: func(b string) string { return b + "/auth/tenant" },
		},
		{
			name: "OIDC only, appended to an issuer with a path (dex style)",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(base+"/mcp", base+"/dex")))
				mux.HandleFunc("/dex/.well-known/openid-configuration", serveJSON(asMeta(base+"/dex", base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource/mcp", wantASM: "/dex/.well-known/openid-configuration",
			wantIss: func(b string) string { return b + "/dex" },
			wantProbe: map[string]string{
				"/.well-known/oauth-authorization-server/dex": "HTTP 404",
				"/.well-known/openid-configuration/dex":       "HTTP 404",
			},
		},
		{
			name: "AS serves only OIDC discovery, path-inserted",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(base+"/mcp", base+"/tenant")))
				mux.HandleFunc("/.well-known/openid-configuration/tenant", serveJSON(asMeta(base+"/tenant", base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource/mcp", wantASM: "/.well-known/openid-configuration/tenant",
			wantIss:   func(b string) string { return b + "/tenant" },
			wantProbe: map[string]string{"/.well-known/oauth-authorization-server/tenant": "HTTP 404"},
		},
		{
			name: "AS serves only OIDC discovery, path-appended (Keycloak realm style)",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource", serveJSON(prmDoc(base+"/mcp", base+"/realms/dev")))
				mux.HandleFunc("/realms/dev/.well-known/openid-configuration", serveJSON(asMeta(base+"/realms/dev", base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource", wantASM: "/realms/dev/.well-known/openid-configuration",
			wantIss: func(b string) string { return b + "/realms/dev" },
			wantProbe: map[string]string{
				"/.well-known/oauth-authorization-server/realms/dev": "HTTP 404",
				"/.well-known/openid-configuration/realms/dev":       "HTTP 404",
			},
		},
		{
			name: "502 from a proxy on one candidate, then success",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
				})
				mux.HandleFunc("/.well-known/oauth-protected-resource", serveJSON(prmDoc(base+"/mcp", base)))
				mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "bad gateway", http.StatusBadGateway)
				})
				mux.HandleFunc("/.well-known/openid-configuration", serveJSON(asMeta(base, base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource", wantASM: "/.well-known/openid-configuration",
			wantProbe: map[string]string{
				"/.well-known/oauth-protected-resource/mcp": "HTTP 502",
				"/.well-known/oauth-authorization-server":   "HTTP 502",
			},
		},
		{
			name: "HTML and oversize bodies are skipped",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, "<!doctype html><p>single page app</p>")
				})
				mux.HandleFunc("/.well-known/oauth-protected-resource", serveJSON(prmDoc(base+"/mcp", base)))
				mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"issuer":%q,"pad":"%s"}`, base, strings.Repeat("x", 2<<20))
				})
				mux.HandleFunc("/.well-known/openid-configuration", serveJSON(asMeta(base, base)))
			},
			wantPRM: "/.well-known/oauth-protected-resource", wantASM: "/.well-known/openid-configuration",
			wantProbe: map[string]string{
				"/.well-known/oauth-protected-resource/mcp": "not a JSON object",
				"/.well-known/oauth-authorization-server":   "body too large",
			},
		},
		{
			name: "no PRM anywhere: base URL is the authorization server (2025-03-26)",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/mcp", challenge401(`Bearer`))
				mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(base, base)))
			},
			wantPRM: "", wantASM: "/.well-known/oauth-authorization-server",
			wantProbe: map[string]string{"": "no protected resource metadata found"},
		},
		{
			name: "bare base URL as target",
			setup: func(t *testing.T, base string, mux *http.ServeMux) {
				mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource"`))
				mux.HandleFunc("/.well-known/oauth-protected-resource", serveJSON(prmDoc(base+"/mcp", base)))
				mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(base, base)))
			},
			target:  func(b string) string { return b + "/" },
			wantPRM: "/.well-known/oauth-protected-resource", wantASM: "/.well-known/oauth-authorization-server",
			wantScope: "mcp",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, mux := newServer(t)
			base := srv.URL
			tt.setup(t, base, mux)
			target := base + "/mcp"
			if tt.target != nil {
				target = tt.target(base)
			}
			d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, target)
			if err != nil {
				t.Fatalf("Discover: %v\nprobes: %v", err, probeURLs(d))
			}
			if d.MCPURL != base+"/mcp" {
				t.Errorf("MCPURL = %q", d.MCPURL)
			}
			if tt.wantPRM == "" {
				if !d.Legacy || d.ResourceMetadata != nil {
					t.Errorf("Legacy %v, ResourceMetadata %v: want legacy mode", d.Legacy, d.ResourceMetadata)
				}
			} else if d.ResourceMetadataURL != base+tt.wantPRM {
				t.Errorf("PRM from %q, want %q", d.ResourceMetadataURL, base+tt.wantPRM)
			}
			if d.AuthServerMetadataURL != base+tt.wantASM {
				t.Errorf("AS metadata from %q, want %q", d.AuthServerMetadataURL, base+tt.wantASM)
			}
			wantIss := base
			if tt.wantIss != nil {
				wantIss = tt.wantIss(base)
			}
			if d.Issuer != wantIss {
				t.Errorf("Issuer = %q, want %q", d.Issuer, wantIss)
			}
			if d.Resource != base+"/mcp" {
				t.Errorf("Resource = %q, want %q", d.Resource, base+"/mcp")
			}
			if tt.wantScope != "" && d.Scope != tt.wantScope {
				t.Errorf("Scope = %q, want %q", d.Scope, tt.wantScope)
			}
			for path, verdict := range tt.wantProbe {
				p := findProbe(t, d, base+path)
				if !strings.HasPrefix(p.Verdict, verdict) {
					t.Errorf("probe %s verdict %q, want prefix %q", path, p.Verdict, verdict)
				}
			}
		})
	}
}

func TestDiscoverNetworkErrorOnOneCandidate(t *testing.T) {
	// A port nobody listens on: the challenge points there, the fetch fails
	// at the TCP level, and discovery moves on to the well-known URLs.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/prm"
	ln.Close()

	srv, mux := newServer(t)
	mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+dead+`"`))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(srv.URL+"/mcp", srv.URL)))
	mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asMeta(srv.URL, srv.URL)))

	d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	p := findProbe(t, d, dead)
	if p.Verdict != "network error" || p.Err == "" || p.Status != 0 {
		t.Errorf("dead probe = %+v, want a network error", p)
	}
	if d.ResourceMetadataURL != srv.URL+"/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("PRM from %q", d.ResourceMetadataURL)
	}
}

func TestDiscoverValidation(t *testing.T) {
	tests := []struct {
		name  string
		cfg   flows.DiscoverConfig
		prm   func(base string) map[string]any
		asm   func(base string) map[string]any
		want  error
		wantD bool // expect success
	}{
		{
			name: "issuer mismatch",
			asm: func(b string) map[string]any {
				m := asMeta(b, b)
				m["issuer"] = "https://evil.example"
				return m
			},
			want: flows.ErrIssuerMismatch,
		},
		{
			name: "resource mismatch",
			prm:  func(b string) map[string]any { return prmDoc(b+"/other", b) },
			want: flows.ErrResourceMismatch,
		},
		{
			name: "trailing slash is a different resource",
			prm:  func(b string) map[string]any { return prmDoc(b+"/mcp/", b) },
			want: flows.ErrResourceMismatch,
		},
		{
			name:  "case of scheme and host does not matter",
			prm:   func(b string) map[string]any { return prmDoc(strings.Replace(b, "http://", "HTTP://", 1)+"/mcp", b) },
			wantD: true,
		},
		{
			name: "http endpoint on a public host",
			asm: func(b string) map[string]any {
				m := asMeta(b, b)
				m["token_endpoint"] = "http://auth.example.com/token"
				return m
			},
			want: flows.ErrInsecureEndpoint,
		},
		{
			name: "http authorization server in PRM",
			prm:  func(b string) map[string]any { return prmDoc(b+"/mcp", "http://auth.example.com") },
			want: flows.ErrInsecureEndpoint,
		},
		{
			name: "missing S256",
			asm: func(b string) map[string]any {
				m := asMeta(b, b)
				delete(m, "code_challenge_methods_supported")
				return m
			},
			want: flows.ErrS256Unsupported,
		},
		{
			name: "plain only",
			asm: func(b string) map[string]any {
				m := asMeta(b, b)
				m["code_challenge_methods_supported"] = []string{"plain"}
				return m
			},
			want: flows.ErrS256Unsupported,
		},
		{
			name: "missing S256 with the unsafe override",
			cfg:  flows.DiscoverConfig{AllowMissingS256: true},
			asm: func(b string) map[string]any {
				m := asMeta(b, b)
				delete(m, "code_challenge_methods_supported")
				return m
			},
			wantD: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, mux := newServer(t)
			b := srv.URL
			prm, asm := prmDoc(b+"/mcp", b), asMeta(b, b)
			if tt.prm != nil {
				prm = tt.prm(b)
			}
			if tt.asm != nil {
				asm = tt.asm(b)
			}
			mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prm))
			mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(asm))
			mux.HandleFunc("/.well-known/openid-configuration", serveJSON(asm))
			d, err := flows.Discover(context.Background(), tt.cfg, b+"/mcp")
			if tt.wantD {
				if err != nil {
					t.Fatalf("Discover: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v\nprobes: %v", err, tt.want, probeURLs(d))
			}
		})
	}
}

func TestDiscoverRefusesInsecureTarget(t *testing.T) {
	// No request is made: the target itself is refused.
	_, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, "http://mcp.example.com/mcp")
	if !errors.Is(err, flows.ErrInsecureEndpoint) {
		t.Fatalf("err = %v, want ErrInsecureEndpoint", err)
	}
}

func TestDiscoverNothingFound(t *testing.T) {
	srv, _ := newServer(t)
	d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
	if !errors.Is(err, flows.ErrNoMetadata) {
		t.Fatalf("err = %v, want ErrNoMetadata", err)
	}
	// challenge, 2 PRM, fallback note, 2 AS candidates (root forms collapse)
	if len(d.Probes) != 6 {
		t.Errorf("%d probes, want 6: %v", len(d.Probes), probeURLs(d))
	}
}

func TestDiscoverContextCancelled(t *testing.T) {
	srv, _ := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := flows.Discover(ctx, flows.DiscoverConfig{}, srv.URL+"/mcp")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
