package apikey_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestAPIKeySetThenPing(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("erin").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := clitest.New(t, env)
	c.Stdin = key + "\n"
	code, stdout, stderr := c.Run("apikey", "set", env.URL)
	if code != 0 || stdout != "" || strings.Contains(stderr, key) {
		t.Fatalf("apikey set: exit %d, stdout %q (the key must never be echoed), stderr %s", code, stdout, stderr)
	}
	c.Stdin = "  \n"
	if code, _, stderr := c.Run("apikey", "set", env.URL); code != clierr.ExitUsage || !strings.Contains(stderr, "no API key") {
		t.Fatalf("empty key: exit %d %s", code, stderr)
	}
	c.Stdin = ""
	code, stdout, stderr = c.Run("status")
	if code != 0 || !strings.Contains(stdout, "api_key") || !strings.Contains(stdout, "no expiry") || strings.Contains(stdout, key) {
		t.Fatalf("status after apikey set: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := c.Run("token"); code != 0 || strings.TrimSpace(stdout) != key {
		t.Fatalf("token with a stored API key: exit %d %q", code, stdout)
	}
	code, stdout, stderr = c.Run("ping", "-o", "json")
	var got map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || got["status"] != "ok" {
		t.Fatalf("ping with stored key: %d %s %s", code, stdout, stderr)
	}
	// Regenerating the key in Settings makes the stored one fail at once.
	if _, err := env.Browser("erin").RegenerateAPIKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := c.Run("ping"); code != clierr.ExitAuthRequired {
		t.Fatalf("ping with a regenerated-away key: exit %d, want 3", code)
	}
}
