package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// mcpRemoteDeviceMeta is what mcp-remote --device-code registers with: its
// usual client metadata with the device grant in place of
// authorization_code, and response_types ["code"] left as it was.
func mcpRemoteDeviceMeta() map[string]any {
	return map[string]any{
		"redirect_uris":              []string{"http://localhost:3334/oauth/callback"},
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{deviceGrant, "refresh_token"},
		"response_types":             []string{"code"},
		"client_name":                "MCP CLI Proxy",
		"client_uri":                 "https://github.com/modelcontextprotocol/mcp-cli",
		"software_id":                "2e6dc280-f3c3-4e01-99a7-8181dbd1d23d",
		"software_version":           "0.1.38",
		"scope":                      "mcp",
	}
}

// Response types that do not fit the grant types are corrected, not
// refused (RFC 7591 §2.1): code goes without the authorization_code grant
// and comes with it. The answer carries the corrected metadata, and the
// corrected client is what the server enforces.
func TestRegisterCorrectsResponseTypes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, tt := range []struct {
		name       string
		meta       map[string]any
		wantGrants []string
		wantResp   []string
	}{
		{"mcp-remote --device-code", mcpRemoteDeviceMeta(), []string{deviceGrant, "refresh_token"}, []string{}},
		{"code with the device grant alone", map[string]any{"grant_types": []string{deviceGrant}, "response_types": []string{"code", "code"}},
			[]string{deviceGrant}, []string{}},
		{"no response type with authorization_code", map[string]any{"redirect_uris": []string{testRedirect}, "response_types": []string{}},
			[]string{"authorization_code"}, []string{"code"}},
		{"code twice with authorization_code", map[string]any{"redirect_uris": []string{testRedirect}, "response_types": []string{"code", "code"}},
			[]string{"authorization_code"}, []string{"code"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postJSON(t, env.URL+"/oauth/register", tt.meta)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", resp.StatusCode, body)
			}
			var got registration
			mustJSON(t, body, &got)
			if !slices.Equal(got.GrantTypes, tt.wantGrants) || got.ResponseTypes == nil || !slices.Equal(got.ResponseTypes, tt.wantResp) {
				t.Fatalf("grant_types %q response_types %q, want %q and %q", got.GrantTypes, got.ResponseTypes, tt.wantGrants, tt.wantResp)
			}
			stored, err := env.Store.GetClient(t.Context(), got.ClientID)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stored.ResponseTypes, tt.wantResp) {
				t.Fatalf("stored response_types %q, want %q", stored.ResponseTypes, tt.wantResp)
			}
		})
	}
}

// mcp-remote --device-code registers, signs in with the device flow as it
// does (form posts to the advertised endpoints) and uses the token; the
// corrected client still cannot use the authorization endpoint.
func TestMCPRemoteDeviceClientRegistersAndSignsIn(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := registerMeta(t, env, mcpRemoteDeviceMeta())

	resp, body := postForm(t, env.URL+"/api/oauth/device/code", url.Values{"client_id": {id}, "scope": {"mcp"}, "resource": {env.URL + "/mcp"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("device authorization: %d %s", resp.StatusCode, body)
	}
	var d deviceBody
	mustJSON(t, body, &d)
	if _, err := env.Browser("remote").Device(context.Background(), d.UserCode, "approve"); err != nil {
		t.Fatal(err)
	}
	resp, body = postForm(t, env.URL+"/oauth/token", url.Values{
		"grant_type": {deviceGrant}, "device_code": {d.DeviceCode}, "client_id": {id}, "resource": {env.URL + "/mcp"},
	})
	tok := mustToken(t, resp, body)
	userID(t, env, tok.AccessToken)

	c := &testClient{t: t, env: env, ID: id, RedirectURI: "http://localhost:3334/oauth/callback"}
	u, _ := c.authURL(nil)
	resp, body = do(t, http.MethodGet, u, "", "", nil)
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound || back.Query().Get("error") != "unauthorized_client" || back.Query().Has("code") {
		t.Fatalf("authorize: %d Location %q, want unauthorized_client at the redirect URI: %.200s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
}
