package register_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestRegisterCachesForLogin(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	code, stdout, stderr := c.Run("register", env.URL+"/mcp", "-o", "json")
	var ci struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &ci) != nil || ci.ClientID == "" || len(ci.RedirectURIs) != 3 || len(ci.GrantTypes) != 2 {
		t.Fatalf("register: %d %s %s", code, stdout, stderr)
	}
	c.Open = clitest.ApprovingBrowser(t, env, "ivan", "approve")
	code, _, stderr = c.Run("login", env.URL+"/mcp", "--debug")
	if code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	if strings.Contains(stderr, "POST "+env.URL+"/oauth/register") || !strings.Contains(stderr, "client_id="+ci.ClientID) {
		t.Fatalf("login did not use the client registered by `mcpauth register` (%s):\n%s", ci.ClientID, stderr)
	}
	// A device-only registration is not cached for login and has no redirect URIs.
	code, stdout, _ = c.Run("register", env.URL+"/mcp", "--device", "-o", "json")
	if code != 0 || !strings.Contains(stdout, "urn:ietf:params:oauth:grant-type:device_code") {
		t.Fatalf("register --device: %d %s", code, stdout)
	}
}
