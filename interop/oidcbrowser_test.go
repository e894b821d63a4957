package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/tsserver"
	"github.com/mcpauth/mcpauth/server/browsertest"
)

// loginPost is what as.mjs prints for each post of the login form.
const loginPost = "SIGN-IN POST"

// `mcpauth conformance --profile mcp --approve=browser` against
// node-oidc-provider's own sign-in and consent pages, in real headless
// Chromium: every verdict is the example driver's, and the login form is
// posted once in the whole run, where the driver, a new cookie jar each
// time, signs in at every authorization.
func TestOIDCProviderBrowserApprover(t *testing.T) {
	chromium := browsertest.Require(t)
	bin := buildMCPAuth(t)
	dir, _ := tsserver.RequireNodePackage(t, "interop/testdata/oidc-provider", "oidc-provider", "node-oidc-provider")
	asLn, rsLn := loopback(t), loopback(t)
	issuer := urlOf(asLn)
	rs := startResourceServer(t, rsLn, resourceConfig{Issuer: issuer, JWKSURL: issuer + "/jwks", Audience: urlOf(rsLn) + "/mcp", Scopes: []string{"mcp"}})
	as := startNode(t, "node-oidc-provider", dir, []string{"as.mjs"}, []string{
		"AS_ISSUER=" + issuer, "MCP_RESOURCE=" + rs.MCPURL, accessTTLEnv,
		"CC_CLIENT_ID=interop-machine", "CC_CLIENT_SECRET=interop-machine-secret-0123456789",
	}, asLn, issuer+"/.well-known/openid-configuration")

	// The development pages take any login with any password. The
	// example driver's run is the yardstick: the same verdicts, check by
	// check.
	d := newCLI(t, bin)
	d.env = append(d.env, "MCPAUTH_DRIVER_USERNAME=alice", "MCPAUTH_DRIVER_PASSWORD=alice-password")
	start := time.Now() // measures the runs, not logic
	_, want := runConformance(t, d, rs.MCPURL, "--browser-command", buildDriver(t))
	driverTime, driverPosts := time.Since(start), as.count(loginPost)

	c := newCLI(t, bin)
	c.env = append(c.env, "MCPAUTH_CONFORMANCE_PASSWORD=alice-password")
	start = time.Now()
	code, rep := runConformance(t, c, rs.MCPURL, "--approve=browser", "--username", "alice", "--chromium", chromium)
	browserTime, browserPosts := time.Since(start), as.count(loginPost)-driverPosts
	if code != 0 {
		t.Errorf("exit %d, want 0 (no must check fails)", code)
	}
	verdicts := map[string]string{}
	for _, r := range want.Checks {
		verdicts[r.ID] = r.Verdict
	}
	for _, r := range rep.Checks {
		if r.Verdict != verdicts[r.ID] || r.Verdict == "inconclusive" && strings.Contains(r.Reason, "approver") {
			t.Errorf("%s: %s with the browser approver, %s with the example driver: %s", r.ID, r.Verdict, verdicts[r.ID], r.Reason)
		}
	}
	if browserPosts != 1 {
		t.Errorf("the browser approver posted the login form %d times, want once for the run", browserPosts)
	}
	t.Logf("example driver: %d sign-ins in %s; browser approver: %d sign-in in %s; %s",
		driverPosts, driverTime.Round(time.Second), browserPosts, browserTime.Round(time.Second), rep.note())
}
