package conformance

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/server/browsertest"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// signInCounter counts, on the reference server, the posts of
// passwordGate's sign-in form, the sign-ins at the development identity
// provider (each ends at /auth/callback) and the consent forms posted.
type signInCounter struct{ gate, idp, consents atomic.Int32 }

func (c *signInCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/gate/signin":
			c.gate.Add(1)
		case r.URL.Path == "/auth/callback":
			c.idp.Add(1)
		case r.Method == http.MethodPost && r.URL.Path == "/oauth/authorize":
			c.consents.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// --approve=browser runs the mcp profile's signing-in checks in real
// headless Chromium through two sign-in pages the form approver cannot
// drive together (an email and password page on the authorization
// server's origin, then the development identity provider on another),
// signing in at each once for the whole run: the browser keeps the
// session, and later authorizations only press approve (or deny).
func TestApproveBrowserSignsInOnce(t *testing.T) {
	bin := browsertest.Require(t)
	var count signInCounter
	inst, err := local.Start(context.Background(), local.Options{Store: memory.New(), Wrap: func(h http.Handler) http.Handler {
		return count.wrap(passwordGate(h))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })

	env := map[string]string{"MCPAUTH_CHROMIUM": bin, passwordEnv: gatePassword}
	res := runCmd(t, env, nil, "--profile", "mcp", inst.URL+"/mcp", "--approve=browser", "--username", gateUser, "--json", "-")
	rep := readJSONReport(t, []byte(res.stdout))
	if res.code != clierr.ExitOK || rep.Summary.Fail != 0 || rep.Summary.Inconclusive != 0 {
		t.Errorf("exit %d, summary %+v\n%s", res.code, rep.Summary, res.stderr)
	}
	v := verdicts(rep)
	for _, id := range []string{"MCP-07", "MCP-08", "MCP-09", "MCP-12", "MCP-13"} {
		if v[id] != "pass" {
			t.Errorf("%s %s, want pass", id, v[id])
		}
	}
	for _, c := range rep.Checks {
		if c.Verdict == "skip" && strings.Contains(c.Reason, "approver") {
			t.Errorf("%s skipped for want of an approver: %s", c.ID, c.Reason)
		}
	}
	if g, i := count.gate.Load(), count.idp.Load(); g != 1 || i != 1 {
		t.Errorf("signed in %d times at the password page and %d at the identity provider, want once each", g, i)
	}
	if n := count.consents.Load(); n < 20 {
		t.Errorf("%d consent forms posted, want the mcp profile's 20 or more", n)
	}
	t.Logf("%d consents, 1 sign-in, in %d ms", count.consents.Load(), rep.DurationMS)
}
