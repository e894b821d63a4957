package token_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// helperServer is a server issuing hour-long tokens, with a fake clock, and
// a CLI logged in to it.
func helperServer(t *testing.T, dpop bool) (*flowstest.Server, *clitest.CLI, *flowstest.FakeClock) {
	t.Helper()
	s := flowstest.NewServer(t)
	clock := flowstest.NewFakeClock(time.Now())
	s.Clock, s.TokenTTL, s.DPoP = clock, time.Hour, dpop
	s.ScopesSupported = []string{"mcp", flows.ScopeOfflineAccess}
	c := clitest.New(t, nil)
	c.Clock, c.Open = clock, clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	return s, c, clock
}

// A host runs its header helper with an environment of its own choosing:
// with nothing but the flags, the helper prints one JSON object of headers.
func TestHeaderHelperUnderEmptyEnvironment(t *testing.T) {
	s, logged, clock := helperServer(t, false)
	want := logged.Stored(s.URL + "/mcp").AccessToken
	host := &clitest.CLI{T: t, Vars: map[string]string{}, Clock: clock}
	code, stdout, stderr := host.Run("token", "--header", "-o", "json", "--storage", "file",
		"--config-dir", logged.Vars["MCPAUTH_CONFIG_DIR"], s.URL+"/mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var headers map[string]string
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&headers); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object of strings (%v): %q", err, stdout)
	}
	if len(headers) != 1 || headers["Authorization"] != "Bearer "+want {
		t.Fatalf("headers %v, want only Authorization: Bearer <the stored token>", headers)
	}
}

// --min-ttl refreshes a token that the usual margin would still hand out.
func TestMinTTLRefreshesEarly(t *testing.T) {
	s, c, clock := helperServer(t, false)
	before := c.Stored(s.URL + "/mcp").AccessToken
	clock.Advance(40 * time.Minute) // 20 minutes left
	for _, ttl := range []string{"0s", "10m"} {
		if code, stdout, stderr := c.Run("token", "--min-ttl", ttl, s.URL+"/mcp"); code != 0 || strings.TrimSpace(stdout) != before {
			t.Fatalf("--min-ttl %s with 20 minutes left: exit %d, token changed %v: %s", ttl, code, strings.TrimSpace(stdout) != before, stderr)
		}
	}
	if n := s.Count("/oauth/token", "refresh_token"); n != 0 {
		t.Fatalf("%d refreshes before --min-ttl asked for one", n)
	}
	code, stdout, stderr := c.Run("token", "--header", "-o", "json", "--min-ttl", "30m", s.URL+"/mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after := c.Stored(s.URL + "/mcp").AccessToken
	if after == before || !strings.Contains(stdout, `"Bearer `+after+`"`) || s.Count("/oauth/token", "refresh_token") != 1 {
		t.Fatalf("--min-ttl 30m with 20 minutes left did not refresh once: %q", stdout)
	}
	if code, _, stderr := c.Run("token", "--min-ttl", "-1m", s.URL+"/mcp"); code != 2 || !strings.Contains(stderr, "--min-ttl") {
		t.Errorf("negative --min-ttl: exit %d: %s", code, stderr)
	}
}

// A DPoP-bound token cannot go through a header helper: the refusal says why
// and names the proxy, and prints no header.
func TestHeaderHelperRefusesDPoP(t *testing.T) {
	s, c, _ := helperServer(t, true)
	code, stdout, stderr := c.Run("token", "--header", "-o", "json", s.URL+"/mcp")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "DPoP-bound") || !strings.Contains(stderr, "mcpauth host add") {
		t.Fatalf("exit %d stdout %q: %s", code, stdout, stderr)
	}
}
