package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/proxy"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The proxy's step-up against the reference server: asked for scope (as a
// 403 insufficient_scope would), it logs in again in the browser for the
// granted scope plus the one asked, stores the new token and uses it; a
// request that still held the old token just takes the new one; and after
// two step-ups it stops instead of looping on a server that never accepts.
// (The reference server offers only mcp and offline_access, which the first
// login already holds, so the union equals the granted scope here; what is
// tested is the login, the store and the bounds.)
func TestProxyStepUpLogsInForTheUnion(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "alice", "approve")
	mcp := env.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp, "--scope", "mcp"); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	var logged strings.Builder
	log := func(format string, args ...any) { fmt.Fprintf(&logged, format+"\n", args...) }
	f := c.Factory(&clitest.Buffer{}, &clitest.Buffer{})
	f.Globals.Storage, f.Globals.StorageSet = "file", true // as root reads MCPAUTH_STORAGE
	step, current, err := proxy.StepUpSource(f, mcp, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := current()
	ok, err := step(ctx, before.Token, "mcp")
	after := current()
	if err != nil || !ok || after.Token == before.Token {
		t.Fatalf("step-up: %v %v, token changed: %v\n%s", ok, err, after.Token != before.Token, logged.String())
	}
	if !strings.Contains(after.Scope, "mcp") || !strings.Contains(after.Scope, "offline_access") {
		t.Errorf("scope after step-up %q, want the union of mcp and offline_access", after.Scope)
	}
	if !strings.Contains(logged.String(), `the server needs scope "mcp offline_access": logging in to `+mcp+" again") {
		t.Errorf("log:\n%s", logged.String())
	}
	if code, out, _ := c.Run("token", mcp); code != 0 || strings.TrimSpace(out) != after.Token {
		t.Errorf("the stepped-up token was not stored: exit %d", code)
	}

	// A request sent with the old token meanwhile: no second login.
	if ok, err := step(ctx, before.Token, "mcp"); !ok || err != nil || current().Token != after.Token {
		t.Errorf("stale token: %v %v", ok, err)
	}
	// A server that keeps refusing: one more step-up, then none.
	second := current().Token
	if ok, err := step(ctx, second, "mcp"); !ok || err != nil || current().Token == second {
		t.Errorf("second step-up: %v %v", ok, err)
	}
	var bounded *flows.StepUpError
	if _, err := step(ctx, current().Token, "mcp"); !errors.As(err, &bounded) || bounded.Attempts != 2 {
		t.Errorf("third step-up: %v, want a refusal after 2", err)
	}
}
