package login_test

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The reference server listens on 127.0.0.1 and declares
// http://127.0.0.1:PORT/mcp as its resource; reached as localhost:PORT, its
// metadata is found but names another resource. The error says which, and
// the URL to use, instead of "no authorization server metadata was found".
func TestLoginThroughLocalhostNamesTheDeclaredResource(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Open = clitest.ApprovingBrowser(t, env, "lo", "approve")
	alias := strings.Replace(env.URL, "127.0.0.1", "localhost", 1) + "/mcp"
	code, _, stderr := c.Run("login", alias)
	if code != clierr.ExitNetwork {
		t.Fatalf("login %s: exit %d, want %d: %s", alias, code, clierr.ExitNetwork, stderr)
	}
	want := alias + " declares its resource as " + env.URL + "/mcp"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "use "+env.URL+"/mcp instead") {
		t.Errorf("login %s says\n%s\nwant %q and the URL to use", alias, stderr, want)
	}
	if strings.Contains(stderr, "no authorization server metadata") {
		t.Errorf("the metadata was found; the message says it was not:\n%s", stderr)
	}
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login with the declared URL: exit %d %s", code, stderr)
	}
}
