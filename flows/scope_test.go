package flows_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// Registration asks for what a CLI is: a native application that may use
// refresh tokens (and the device grant where the server has one).
func TestRegistrationIsNativeWithRefresh(t *testing.T) {
	srv, mux := newServer(t)
	rg := &registrar{}
	mux.HandleFunc("/oauth/register", rg.handler(t))
	ctx := context.Background()

	for _, device := range []bool{false, true} {
		d := discFor(srv.URL, func(md *flows.AuthServerMetadata) {
			if !device {
				md.DeviceAuthorizationEndpoint = ""
			}
		})
		if _, err := flows.ResolveClient(ctx, flows.ClientConfig{}, d); err != nil {
			t.Fatal(err)
		}
		md := rg.last.Load()
		if md.ApplicationType != "native" {
			t.Errorf("device=%v: application_type %q, want native", device, md.ApplicationType)
		}
		want := []string{"authorization_code", "refresh_token"}
		if device {
			want = append(want, flows.GrantTypeDeviceCode)
		}
		if !slices.Equal(md.GrantTypes, want) {
			t.Errorf("device=%v: grant_types %v, want %v", device, md.GrantTypes, want)
		}
	}
}

// offline_access is added exactly when the authorization server lists it:
// in discovery's scope, the registration, the authorization request and an
// explicit --scope.
func TestOfflineAccessOnlyWhenListed(t *testing.T) {
	for _, listed := range []bool{false, true} {
		srv, mux := newServer(t)
		rg := &registrar{}
		mux.HandleFunc("/oauth/register", rg.handler(t))
		mux.HandleFunc("/mcp", challenge401(`Bearer scope="mcp:tools"`))
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(srv.URL+"/mcp", srv.URL)))
		meta := asMeta(srv.URL, srv.URL)
		if listed {
			meta["scopes_supported"] = []string{"mcp", "offline_access"}
		}
		mux.HandleFunc("/.well-known/oauth-authorization-server", serveJSON(meta))
		ctx := context.Background()
		d, err := flows.Discover(ctx, flows.DiscoverConfig{}, srv.URL+"/mcp")
		if err != nil {
			t.Fatal(err)
		}
		want := "mcp:tools"
		if listed {
			want = "mcp:tools offline_access"
		}
		if d.Scope != want {
			t.Errorf("listed=%v: discovery scope %q, want %q", listed, d.Scope, want)
		}
		if _, err := flows.ResolveClient(ctx, flows.ClientConfig{}, d); err != nil {
			t.Fatal(err)
		}
		// The registration adds what the resource advertises (mcp).
		if got := rg.last.Load().Scope; got != want+" mcp" {
			t.Errorf("listed=%v: registration scope %q, want %q", listed, got, want+" mcp")
		}
		explicit := flows.AuthCodeConfig{Discovery: d, Client: flows.Client{ID: "c"}, Scope: "files:read"}
		req, err := explicit.NewRequest("http://127.0.0.1:1/callback")
		if err != nil {
			t.Fatal(err)
		}
		wantExplicit := "files:read"
		if listed {
			wantExplicit = "files:read offline_access"
		}
		if req.Scope != wantExplicit {
			t.Errorf("listed=%v: --scope request %q, want %q", listed, req.Scope, wantExplicit)
		}
	}
}
