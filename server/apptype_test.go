package server_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// application_type (MCP 2026-07-28): accepted, echoed and stored; native by
// default when every redirect URI is loopback or a private-use scheme, else
// web; a web client needs https redirect URIs; any other value is
// invalid_client_metadata. refresh_token may be a grant type.
func TestRegisterApplicationType(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs})
	loop, priv, web := "http://127.0.0.1/cb", "com.example.app:/cb", "https://c.example/cb"
	for _, tt := range []struct {
		name     string
		meta     map[string]any
		wantType string // "" when the registration is refused
		code     string
	}{
		{"omitted, loopback", map[string]any{"redirect_uris": []string{loop}}, "native", ""},
		{"omitted, private-use scheme", map[string]any{"redirect_uris": []string{priv, "http://[::1]:9/cb"}}, "native", ""},
		{"omitted, no redirect URIs", map[string]any{"grant_types": []string{deviceGrant}}, "native", ""},
		{"omitted, one https", map[string]any{"redirect_uris": []string{loop, web}}, "web", ""},
		{"omitted, http localhost", map[string]any{"redirect_uris": []string{"http://localhost:8/cb"}}, "native", ""},
		{"native with https", map[string]any{"application_type": "native", "redirect_uris": []string{web}}, "native", ""},
		{"web with https", map[string]any{"application_type": "web", "redirect_uris": []string{web}}, "web", ""},
		{"web with loopback", map[string]any{"application_type": "web", "redirect_uris": []string{web, loop}}, "", "invalid_redirect_uri"},
		{"web with private-use scheme", map[string]any{"application_type": "web", "redirect_uris": []string{priv}}, "", "invalid_redirect_uri"},
		{"unknown type", map[string]any{"application_type": "browser", "redirect_uris": []string{loop}}, "", "invalid_client_metadata"},
		{"case differs", map[string]any{"application_type": "Native", "redirect_uris": []string{loop}}, "", "invalid_client_metadata"},
		{"not a string", map[string]any{"application_type": 1, "redirect_uris": []string{loop}}, "", "invalid_client_metadata"},
		{"refresh_token grant", map[string]any{"redirect_uris": []string{loop}, "grant_types": []string{"authorization_code", "refresh_token"}, "scope": "mcp offline_access"}, "native", ""},
		{"refresh_token grant alone", map[string]any{"redirect_uris": []string{loop}, "grant_types": []string{"refresh_token"}}, "", "invalid_client_metadata"},
		{"scope offline_access", map[string]any{"redirect_uris": []string{loop}, "scope": "offline_access mcp"}, "native", ""},
		{"scope offline_access plus unknown", map[string]any{"redirect_uris": []string{loop}, "scope": "mcp offline_access admin"}, "", "invalid_client_metadata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			resp, body := postJSON(t, env.URL+"/oauth/register", tt.meta)
			if tt.wantType == "" {
				oauthErr(t, resp, body, http.StatusBadRequest, tt.code)
				if cs.writes.Load() != before {
					t.Fatal("a refused registration stored a client")
				}
				return
			}
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", resp.StatusCode, body)
			}
			var got struct {
				ClientID        string   `json:"client_id"`
				ApplicationType string   `json:"application_type"`
				GrantTypes      []string `json:"grant_types"`
				Scope           string   `json:"scope"`
			}
			mustJSON(t, body, &got)
			if got.ApplicationType != tt.wantType {
				t.Fatalf("application_type %q, want %q", got.ApplicationType, tt.wantType)
			}
			c, err := env.Store.GetClient(t.Context(), got.ClientID)
			if err != nil || c.ApplicationType != tt.wantType || !slices.Equal(c.GrantTypes, got.GrantTypes) || c.Scope != got.Scope {
				t.Fatalf("stored client %+v (%v); want application_type %q and the echoed grants and scope", c, err, tt.wantType)
			}
			if sc, _ := tt.meta["scope"].(string); sc != "" && got.Scope != "mcp offline_access" {
				t.Fatalf("scope %q, want the canonical \"mcp offline_access\"", got.Scope)
			}
		})
	}
}
