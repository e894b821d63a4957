package server_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// A server restarted on the same SQLite file mid-flow finds the pending
// device code, the issued authorization code and the API key intact.
func TestRestartOnSameSQLiteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	key := []byte("restart-test-signing-key-0123456789abcdef")
	ctx := context.Background()

	st1, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	env1 := servertest.New(t, servertest.Options{Store: st1, SigningKey: key})
	c := register(t, env1)
	b1 := env1.Browser("rita")
	apiKey, err := b1.APIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rita := userID(t, env1, apiKey)
	code, verifier := c.code(b1)
	resp, body := postJSON(t, env1.URL+"/api/oauth/device/code", map[string]string{"client_id": c.ID})
	if resp.StatusCode != 200 {
		t.Fatalf("device code: %d %s", resp.StatusCode, body)
	}
	var dc struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	mustJSON(t, body, &dc)
	env1.Instance.Close()
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}

	// A new process, in effect: new store handle, new listener, new IdP.
	st2, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	env2 := servertest.New(t, servertest.Options{Store: st2, SigningKey: key, Clock: env1.Clock})
	c.env = env2 // same client id, new base URL

	if got := userID(t, env2, apiKey); got != rita {
		t.Fatalf("API key after restart is for %s, want %s", got, rita)
	}
	poll := func() (*http.Response, []byte) {
		return postJSON(t, env2.URL+"/api/oauth/device/token", map[string]string{
			"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": dc.DeviceCode, "client_id": c.ID,
		})
	}
	resp, body = poll()
	oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")
	// Signing in again as rita after the restart (at a new IdP port) finds
	// the same user: Settings shows the same key.
	b2 := env2.Browser("rita")
	if again, err := b2.APIKey(ctx); err != nil || again != apiKey {
		t.Fatalf("after restart rita's key is %q (%v), want the one from before", again, err)
	}
	if got := userID(t, env2, sessionToken(t, env2, b2)); got != rita {
		t.Fatalf("signing in again after the restart gives user %s, want %s", got, rita)
	}
	if page, err := b2.Device(ctx, dc.UserCode, "approve"); err != nil || page.Status != 200 {
		t.Fatalf("approving after restart: %v %v", page, err)
	}
	env2.Clock.Advance(5e9)
	resp, body = poll()
	if got := userID(t, env2, mustToken(t, resp, body).AccessToken); got != rita {
		t.Fatalf("device token after restart is for %s, want %s", got, rita)
	}

	// The code was bound to the first base URL's client registration, which
	// is the same client id in the same database: it still exchanges.
	resp, body = postForm(t, env2.URL+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
		"client_id": {c.ID}, "code_verifier": {verifier},
	})
	if got := userID(t, env2, mustToken(t, resp, body).AccessToken); got != rita {
		t.Fatalf("code issued before the restart exchanged for user %s, want %s", got, rita)
	}
}
