package root_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestLoginPingTokenStatusLogout(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "alice", "approve")
	mcp := env.URL + "/mcp"

	code, stdout, loginErr := c.Run("login", mcp)
	if code != 0 || stdout != "" {
		t.Fatalf("login exit %d, stdout %q: %s", code, stdout, loginErr)
	}

	code, stdout, stderr := c.Run("ping")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), "u_") {
		t.Fatalf("ping exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	userID := strings.TrimSpace(stdout)
	if !regexp.MustCompile(`Logged in to ` + regexp.QuoteMeta(mcp) + ` as alice \(` + userID + `\) \(token expires 20\d\d-`).MatchString(loginErr) {
		t.Fatalf("login said: %s", loginErr)
	}

	code, stdout, _ = c.Run("token")
	tok := strings.TrimSpace(stdout)
	if code != 0 || strings.Count(tok, ".") != 2 {
		t.Fatalf("token exit %d: %q", code, stdout)
	}
	code, stdout, _ = c.Run("token", "--header")
	if code != 0 || strings.TrimSpace(stdout) != "Authorization: Bearer "+tok {
		t.Fatalf("token --header: %q", stdout)
	}

	// The printed token works with any HTTP client.
	req, _ := http.NewRequest("GET", env.URL+"/api/ping", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ping with printed token: %v %v", resp, err)
	}
	resp.Body.Close()

	code, stdout, _ = c.Run("status", "--output", "json")
	var entries []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &entries) != nil || len(entries) != 1 {
		t.Fatalf("status: exit %d %s", code, stdout)
	}
	if entries[0]["server"] != mcp || entries[0]["backend"] != "file" || entries[0]["kind"] != "oauth" {
		t.Fatalf("status entry %v", entries[0])
	}

	// A second login reuses the cached registration: no new client.
	code, _, stderr = c.Run("login", mcp, "--debug")
	if code != 0 {
		t.Fatalf("second login: %s", stderr)
	}
	if strings.Contains(stderr, "POST "+env.URL+"/oauth/register") {
		t.Fatal("second login registered a new client instead of using the cached one")
	}
	if strings.Contains(stderr, tok) {
		t.Fatal("--debug output leaks the access token")
	}
	for _, leak := range regexp.MustCompile(`(code|code_verifier|access_token)=([A-Za-z0-9_\-.~]{20,})`).FindAllStringSubmatch(stderr, -1) {
		t.Fatalf("--debug output leaks %s=%s", leak[1], leak[2])
	}

	code, _, stderr = c.Run("logout")
	if code != 0 || !strings.Contains(stderr, "Logged out of "+mcp+" (default)") {
		t.Fatalf("logout: exit %d %s", code, stderr)
	}
	code, _, stderr = c.Run("ping")
	if code != clierr.ExitAuthRequired || !strings.Contains(stderr, "mcpauth login") {
		t.Fatalf("ping after logout: exit %d %s", code, stderr)
	}
	code, _, _ = c.Run("token", mcp)
	if code != clierr.ExitAuthRequired {
		t.Fatalf("token after logout: exit %d", code)
	}
}

func TestMCPAUTHTokenOverrides(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("dave").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := clitest.New(t, env)
	c.Vars["MCPAUTH_TOKEN"] = key
	code, stdout, stderr := c.Run("ping", env.URL+"/mcp")
	if code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping with MCPAUTH_TOKEN: %d %q %s", code, stdout, stderr)
	}
	// token needs no server; ping needs one to know where /api/ping is.
	if code, stdout, _ := c.Run("token", "--header"); code != 0 || stdout != "Authorization: Bearer "+key+"\n" {
		t.Fatalf("token with MCPAUTH_TOKEN: %d %q", code, stdout)
	}
	if code, _, stderr := c.Run("ping"); code != clierr.ExitUsage || !strings.Contains(stderr, "MCPAUTH_TOKEN") {
		t.Fatalf("ping without a server: %d %s", code, stderr)
	}
	// Storage is never opened: CI without a keyring works in auto mode.
	delete(c.Vars, "MCPAUTH_STORAGE")
	c.Backend, c.KeyringTimeout = newHangingBackend(t), 100*time.Millisecond
	if code, _, stderr := c.Run("ping", env.URL); code != 0 {
		t.Fatalf("ping with MCPAUTH_TOKEN and no keyring: %d %s", code, stderr)
	}
	c.Vars["MCPAUTH_TOKEN"] = "garbage"
	code, _, stderr = c.Run("ping", env.URL+"/mcp")
	if code != clierr.ExitAuthRequired || strings.Contains(stderr, "garbage") {
		t.Fatalf("garbage MCPAUTH_TOKEN: exit %d, want 3: %s", code, stderr)
	}
}

func TestQuietKeepsStderrForErrors(t *testing.T) {
	c := clitest.New(t, nil)
	if code, _, stderr := c.Run("status"); code != 0 || !strings.Contains(stderr, "No stored credentials") {
		t.Fatalf("status: %d %q", code, stderr)
	}
	if code, stdout, stderr := c.Run("status", "--quiet"); code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("status --quiet: %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := c.Run("token", "-q"); code != clierr.ExitAuthRequired || !strings.Contains(stderr, "mcpauth login") {
		t.Fatalf("token -q: errors still show: %d %q", code, stderr)
	}
}
