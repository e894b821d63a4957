package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Both discovery documents carry every field service.md lists with exactly
// its value, the protected resource metadata also at the path-inserted
// location of RFC 9728 §3.1.
func TestDiscoveryDocuments(t *testing.T) {
	t.Parallel()
	env := newEnv(t)

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, body := do(t, http.MethodGet, env.URL+path, "", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %q: %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		mustJSON(t, body, &prm)
		if prm.Resource != env.URL+"/mcp" {
			t.Errorf("%s: resource %q, want %q", path, prm.Resource, env.URL+"/mcp")
		}
		if !slices.Contains(prm.AuthorizationServers, env.URL) {
			t.Errorf("%s: authorization_servers %q lacks %q", path, prm.AuthorizationServers, env.URL)
		}
		if !slices.Equal(prm.ScopesSupported, []string{"mcp"}) {
			t.Errorf("%s: scopes_supported %q, want [mcp]", path, prm.ScopesSupported)
		}
	}

	resp, body := do(t, http.MethodGet, env.URL+"/.well-known/oauth-authorization-server", "", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("authorization server metadata: %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var as struct {
		Issuer                        string   `json:"issuer"`
		AuthorizationEndpoint         string   `json:"authorization_endpoint"`
		TokenEndpoint                 string   `json:"token_endpoint"`
		RegistrationEndpoint          string   `json:"registration_endpoint"`
		DeviceAuthorizationEndpoint   string   `json:"device_authorization_endpoint"`
		ResponseTypesSupported        []string `json:"response_types_supported"`
		GrantTypesSupported           []string `json:"grant_types_supported"`
		CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
		ScopesSupported               []string `json:"scopes_supported"`
		RevocationEndpoint            string   `json:"revocation_endpoint"`
		RevocationAuthMethods         []string `json:"revocation_endpoint_auth_methods_supported"`
	}
	mustJSON(t, body, &as)
	for _, f := range []struct{ name, got, want string }{
		{"issuer", as.Issuer, env.URL},
		{"authorization_endpoint", as.AuthorizationEndpoint, env.URL + "/oauth/authorize"},
		{"token_endpoint", as.TokenEndpoint, env.URL + "/oauth/token"},
		{"registration_endpoint", as.RegistrationEndpoint, env.URL + "/oauth/register"},
		{"device_authorization_endpoint", as.DeviceAuthorizationEndpoint, env.URL + "/api/oauth/device/code"},
		{"revocation_endpoint", as.RevocationEndpoint, env.URL + "/oauth/revoke"},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	for _, f := range []struct {
		name      string
		got, want []string
	}{
		{"response_types_supported", as.ResponseTypesSupported, []string{"code"}},
		{"grant_types_supported", as.GrantTypesSupported, []string{"authorization_code", deviceGrant, "refresh_token"}},
		{"code_challenge_methods_supported", as.CodeChallengeMethodsSupported, []string{"S256"}},
		{"scopes_supported", as.ScopesSupported, []string{"mcp", "offline_access"}},
		{"revocation_endpoint_auth_methods_supported", as.RevocationAuthMethods, []string{"none"}},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(f.got)), slices.Sorted(slices.Values(f.want))) {
			t.Errorf("%s = %q, want %q (in any order)", f.name, f.got, f.want)
		}
	}
}
