package flows_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// registrar plays an RFC 7591 registration endpoint that records requests.
type registrar struct {
	calls atomic.Int32
	last  atomic.Pointer[flows.ClientMetadata]
}

func (rg *registrar) handler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("registration Content-Type %q", ct)
		}
		var md flows.ClientMetadata
		if err := json.NewDecoder(r.Body).Decode(&md); err != nil {
			oauthErr(w, 400, "invalid_client_metadata", err.Error())
			return
		}
		n := rg.calls.Add(1)
		rg.last.Store(&md)
		writeJSON(w, http.StatusCreated, map[string]any{
			"client_id":                  "dyn-" + string(rune('0'+n)),
			"client_name":                md.ClientName,
			"redirect_uris":              md.RedirectURIs,
			"grant_types":                md.GrantTypes,
			"token_endpoint_auth_method": "none",
			"client_id_issued_at":        1700000000,
		})
	}
}

func TestRegister(t *testing.T) {
	srv, mux := newServer(t)
	mux.HandleFunc("/created", (&registrar{}).handler(t))
	mux.HandleFunc("/ok200", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"client_id": "c200", "client_secret": "s", "client_secret_expires_at": 0})
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) {
		oauthErr(w, 400, "invalid_redirect_uri", "redirect_uris must be https or loopback")
	})
	mux.HandleFunc("/noid", serveJSON(map[string]any{"client_name": "x"}))

	md := flows.ClientMetadata{ClientName: "mcpauth", RedirectURIs: []string{"http://127.0.0.1:3000/callback"},
		GrantTypes: []string{"authorization_code"}, TokenEndpointAuthMethod: "none"}
	ci, err := flows.Register(context.Background(), nil, srv.URL+"/created", md)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if ci.ClientID != "dyn-1" || ci.ClientName != "mcpauth" || ci.ClientIDIssuedAt != 1700000000 ||
		!slices.Equal(ci.RedirectURIs, md.RedirectURIs) {
		t.Errorf("client information = %+v", ci)
	}

	if ci, err := flows.Register(context.Background(), nil, srv.URL+"/ok200", md); err != nil || ci.ClientSecret != "s" {
		t.Errorf("200 response: %+v, %v", ci, err)
	}

	_, err = flows.Register(context.Background(), nil, srv.URL+"/bad", md)
	var oe *flows.OAuthError
	if !errors.As(err, &oe) || oe.Code != "invalid_redirect_uri" || oe.StatusCode != 400 || oe.Description == "" {
		t.Errorf("error response: %v (%#v)", err, oe)
	}

	if _, err := flows.Register(context.Background(), nil, srv.URL+"/noid", md); err == nil || !strings.Contains(err.Error(), "client_id") {
		t.Errorf("missing client_id: err = %v", err)
	}
}

// discFor returns a Discovery for a fake AS at base with mods applied.
func discFor(base string, mod func(*flows.AuthServerMetadata)) *flows.Discovery {
	md := &flows.AuthServerMetadata{
		Issuer:                        base,
		AuthorizationEndpoint:         base + "/oauth/authorize",
		TokenEndpoint:                 base + "/oauth/token",
		RegistrationEndpoint:          base + "/oauth/register",
		DeviceAuthorizationEndpoint:   base + "/api/oauth/device/code",
		CodeChallengeMethodsSupported: []string{"S256"},
	}
	if mod != nil {
		mod(md)
	}
	return &flows.Discovery{MCPURL: base + "/mcp", Resource: base + "/mcp", Issuer: base, AuthServer: md, Scope: "mcp"}
}

func TestResolveClient(t *testing.T) {
	srv, mux := newServer(t)
	rg := &registrar{}
	mux.HandleFunc("/oauth/register", rg.handler(t))
	ctx := context.Background()

	t.Run("pre-registered public client", func(t *testing.T) {
		c, err := flows.ResolveClient(ctx, flows.ClientConfig{ClientID: "static"}, discFor(srv.URL, nil))
		if err != nil || c.ID != "static" || c.AuthMethod != flows.AuthMethodNone || c.Source != flows.SourcePreRegistered {
			t.Errorf("got %+v, %v", c, err)
		}
	})
	t.Run("pre-registered confidential client follows the metadata", func(t *testing.T) {
		d := discFor(srv.URL, func(m *flows.AuthServerMetadata) {
			m.TokenEndpointAuthMethodsSupported = []string{"client_secret_post"}
		})
		c, _ := flows.ResolveClient(ctx, flows.ClientConfig{ClientID: "s", ClientSecret: "x"}, d)
		if c.AuthMethod != flows.AuthMethodPost {
			t.Errorf("auth method %q, want client_secret_post", c.AuthMethod)
		}
		c, _ = flows.ResolveClient(ctx, flows.ClientConfig{ClientID: "s", ClientSecret: "x"}, discFor(srv.URL, nil))
		if c.AuthMethod != flows.AuthMethodBasic {
			t.Errorf("auth method %q, want the RFC 8414 default client_secret_basic", c.AuthMethod)
		}
	})
	t.Run("metadata document when advertised", func(t *testing.T) {
		cfg := flows.ClientConfig{MetadataDocumentURL: "https://mcpauth.example/client.json"}
		d := discFor(srv.URL, func(m *flows.AuthServerMetadata) { m.ClientIDMetadataDocumentSupported = true })
		before := rg.calls.Load()
		c, err := flows.ResolveClient(ctx, cfg, d)
		if err != nil || c.ID != cfg.MetadataDocumentURL || c.Source != flows.SourceMetadataDocument || rg.calls.Load() != before {
			t.Errorf("got %+v, %v (registrations %d→%d)", c, err, before, rg.calls.Load())
		}
		// Not advertised: falls through to registration.
		c, err = flows.ResolveClient(ctx, cfg, discFor(srv.URL, nil))
		if err != nil || c.Source != flows.SourceRegistered {
			t.Errorf("without support got %+v, %v", c, err)
		}
	})
	t.Run("registers, caches, then hits the cache", func(t *testing.T) {
		cache := &memCache{}
		d := discFor(srv.URL, nil)
		before := rg.calls.Load()
		c, err := flows.ResolveClient(ctx, flows.ClientConfig{Cache: cache}, d)
		if err != nil || c.Source != flows.SourceRegistered || cache.puts != 1 || rg.calls.Load() != before+1 {
			t.Fatalf("first resolve: %+v, %v, puts %d", c, err, cache.puts)
		}
		sent := rg.last.Load()
		if sent.ClientName != "mcpauth CLI" || sent.TokenEndpointAuthMethod != "none" || sent.Scope != "mcp" ||
			!slices.Equal(sent.GrantTypes, []string{"authorization_code", "refresh_token", flows.GrantTypeDeviceCode}) ||
			!slices.Equal(sent.RedirectURIs, flows.DefaultRedirectURIs(d.Resource)) {
			t.Errorf("registration request = %+v", sent)
		}
		c2, err := flows.ResolveClient(ctx, flows.ClientConfig{Cache: cache}, d)
		if err != nil || c2.ID != c.ID || c2.Source != flows.SourceCache || rg.calls.Load() != before+1 {
			t.Errorf("second resolve: %+v, %v; registrations %d, want %d", c2, err, rg.calls.Load(), before+1)
		}
	})
	t.Run("expired cached secret re-registers", func(t *testing.T) {
		clk := flowstest.NewFakeClock(t0)
		cache := &memCache{}
		d := discFor(srv.URL, nil)
		_ = cache.Put(d.Issuer, d.Resource, &flows.ClientInformation{ClientID: "old", ClientSecret: "s",
			ClientSecretExpiresAt: t0.Add(-1).Unix()})
		c, err := flows.ResolveClient(ctx, flows.ClientConfig{Cache: cache, Clock: clk}, d)
		if err != nil || c.ID == "old" || c.Source != flows.SourceRegistered {
			t.Errorf("got %+v, %v", c, err)
		}
	})
	t.Run("no device grant when the AS has no device endpoint", func(t *testing.T) {
		d := discFor(srv.URL, func(m *flows.AuthServerMetadata) { m.DeviceAuthorizationEndpoint = "" })
		if _, err := flows.ResolveClient(ctx, flows.ClientConfig{}, d); err != nil {
			t.Fatal(err)
		}
		if g := rg.last.Load().GrantTypes; !slices.Equal(g, []string{"authorization_code", "refresh_token"}) {
			t.Errorf("grant_types %v", g)
		}
	})
	t.Run("registers native, with every advertised scope", func(t *testing.T) {
		// The PRM's scopes_supported when it lists any, else the AS's:
		// a server may give a client registered without scope only its
		// defaults (Hydra), or take it for a web client (better-auth).
		d := discFor(srv.URL, func(m *flows.AuthServerMetadata) { m.ScopesSupported = []string{"openid", "offline_access"} })
		for _, tc := range []struct {
			prm  *flows.ProtectedResourceMetadata
			want string
		}{
			{&flows.ProtectedResourceMetadata{ScopesSupported: []string{"mcp", "files:read"}}, "mcp files:read offline_access"},
			{&flows.ProtectedResourceMetadata{}, "mcp openid offline_access"},
		} {
			d.ResourceMetadata = tc.prm
			if _, err := flows.ResolveClient(ctx, flows.ClientConfig{}, d); err != nil {
				t.Fatal(err)
			}
			if sent := rg.last.Load(); sent.ApplicationType != "native" || sent.Scope != tc.want {
				t.Errorf("PRM scopes %v: application_type %q scope %q, want native and %q", tc.prm.ScopesSupported, sent.ApplicationType, sent.Scope, tc.want)
			}
		}
	})
	t.Run("no registration endpoint", func(t *testing.T) {
		d := discFor(srv.URL, func(m *flows.AuthServerMetadata) { m.RegistrationEndpoint = "" })
		if _, err := flows.ResolveClient(ctx, flows.ClientConfig{}, d); !errors.Is(err, flows.ErrNoClient) {
			t.Errorf("err = %v, want ErrNoClient", err)
		}
	})
}

func TestDefaultRedirectURIs(t *testing.T) {
	a := flows.DefaultRedirectURIs("https://h/mcp")
	b := flows.DefaultRedirectURIs("HTTPS://H:443/mcp")
	if len(a) != 3 || !slices.Equal(a, b) {
		t.Errorf("got %v and %v: want three equal URIs for equivalent resources", a, b)
	}
	if slices.Equal(a, flows.DefaultRedirectURIs("https://other/mcp")) {
		t.Error("different resources gave the same ports")
	}
	for _, u := range a {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/callback") {
			t.Errorf("bad redirect URI %q", u)
		}
	}
}
