package login_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The browser's "Signed in" page names the account as the terminal does:
// the name the server gives, the user id after it, not the token's bare
// subject (the user id).
func TestSignedInPageNamesTheUserLikeTheTerminal(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	var page string
	c.Open = clitest.ReadingBrowser(t, env, "mona", "approve", &page)
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	terminal := regexp.MustCompile(`as (mona \(u_[^)]+\))`).FindStringSubmatch(stderr)
	if terminal == nil {
		t.Fatalf("the terminal does not name mona with her id:\n%s", stderr)
	}
	if want := `id="account">` + terminal[1] + `<`; !strings.Contains(page, want) {
		t.Errorf("the Signed in page lacks %q, as the terminal says it:\n%s", want, page)
	}
}
