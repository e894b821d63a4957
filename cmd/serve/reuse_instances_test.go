package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/conformance/approve"
)

// Two `mcpauth serve` processes on one PostgreSQL database, both with a
// 10 s refresh reuse interval (set through MCPAUTH_REFRESH_REUSE_INTERVAL):
// a device client registered as mcp-remote --device-code registers, and
// three clients refresh its family at once through the round-robin proxy,
// so the instance that did not rotate answers some of them. All get the
// same pair, which works on both instances.
func TestSeveralInstancesRefreshReuseInterval(t *testing.T) {
	t.Setenv("MCPAUTH_REFRESH_REUSE_INTERVAL", "10s")
	c := startCluster(t, 2)
	clientID := register(t, c.proxy.URL, `{"client_name":"reuse","grant_types":["urn:ietf:params:oauth:grant-type:device_code","refresh_token"],"response_types":["code"]}`)
	resp, err := http.PostForm(c.proxy.URL+"/api/oauth/device/code", url.Values{"client_id": {clientID}, "scope": {"mcp offline_access"}})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		DeviceCode      string `json:"device_code"`
		UserCode        string `json:"user_code"`
		VerificationURI string `json:"verification_uri"`
	}
	decodeJSON(t, resp, &d)
	approver, err := approve.NewFormApprover(c.proxy.URL, "fay", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := approver.ApproveDevice(context.Background(), d.VerificationURI, d.UserCode); err != nil {
		t.Fatal(err)
	}
	type pair struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	// token runs in goroutines: it reports rather than failing the test.
	token := func(form url.Values) (pair, error) {
		resp, err := http.PostForm(c.proxy.URL+"/oauth/token", form)
		if err != nil {
			return pair{}, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var p pair
		if resp.StatusCode != http.StatusOK {
			return p, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
		}
		return p, json.Unmarshal(raw, &p)
	}
	first, err := token(url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {d.DeviceCode}, "client_id": {clientID}})
	if err != nil || first.RefreshToken == "" {
		t.Fatalf("device token: %v, refresh token %q", err, first.RefreshToken)
	}
	got := make([]pair, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "client_id": {clientID}})
		})
	}
	wg.Wait()
	for i, p := range got {
		if errs[i] != nil || p != got[0] || p.AccessToken == "" || p.RefreshToken == first.RefreshToken {
			t.Fatalf("client %d: %v, or another pair than client 0's, or none", i, errs[i])
		}
	}
	for _, inst := range c.instances {
		for name, tok := range map[string]string{"first access token": first.AccessToken, "new access token": got[0].AccessToken} {
			if s := pingStatus(t, inst.url, tok); s != http.StatusOK {
				t.Errorf("%s on %s: %d, want 200", name, inst.url, s)
			}
		}
	}
}
