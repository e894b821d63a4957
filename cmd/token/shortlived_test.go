package token_test

import (
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// Short-lived access tokens (60 s, as some providers issue) are refreshed
// about once per lifetime, not on every use: five minutes of `mcpauth
// token` every 5 s (60 calls) make about 300/45 refreshes, the margin being
// a quarter of the lifetime. A fixed 60 s margin made it one per call.
func TestShortLivedTokensRefreshOncePerLifetime(t *testing.T) {
	s := flowstest.NewServer(t)
	clock := flowstest.NewFakeClock(time.Now())
	s.Clock, s.TokenTTL = clock, time.Minute
	s.ScopesSupported = []string{"mcp", flows.ScopeOfflineAccess}
	c := clitest.New(t, nil)
	c.Clock = clock
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", s.URL+"/mcp"); code != 0 {
		t.Fatal(stderr)
	}
	for range 60 {
		clock.Advance(5 * time.Second)
		if code, stdout, stderr := c.Run("token"); code != 0 || stdout == "" {
			t.Fatalf("token: exit %d: %s", code, stderr)
		}
	}
	n := s.Count("/oauth/token", "refresh_token")
	if n < 5 || n > 8 {
		t.Fatalf("%d refreshes in 5 minutes of 60 s tokens, want about one per lifetime (5-8)", n)
	}
	t.Logf("%d refreshes for 60 calls over 300 s", n)
}
