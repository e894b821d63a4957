package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Better Auth's OAuth 2.1 provider plugin (@better-auth/oauth-provider,
// interop/testdata/better-auth/as.mjs, with the sign-in and consent pages an
// application hosts written as plain HTML forms): unauthenticated dynamic
// registration, the device flow, client credentials, RFC 8707
// resource-bound JWT access tokens (EdDSA) and DPoP advertised by default;
// its issuer has a path (/api/auth), so its metadata is at the
// path-inserted RFC 8414 URL.
func labBetterAuth(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/better-auth", "@better-auth/oauth-provider", "Better Auth")
	asLn, rsLn := loopback(t), loopback(t)
	origin := urlOf(asLn)
	issuer := origin + "/api/auth"
	machineFile := filepath.Join(t.TempDir(), "machine-client.json")
	rs := startResourceServer(t, rsLn, resourceConfig{Issuer: issuer, JWKSURL: issuer + "/jwks", Audience: urlOf(rsLn) + "/mcp", Scopes: []string{"mcp"}})
	as := startNode(t, "better-auth", dir, []string{"as.mjs"}, []string{
		"AS_ORIGIN=" + origin, "MCP_RESOURCE=" + rs.MCPURL, accessTTLEnv, "MACHINE_CLIENT_FILE=" + machineFile,
	}, asLn, origin+"/.well-known/oauth-authorization-server/api/auth")
	r := g.row("Better Auth OAuth provider plugin", version)
	c := newCLI(t, bin)
	// The plugin advertises DPoP; the lab's MCP server takes only Bearer.
	serverFlowsWith(t, g, r, c, rs.MCPURL, issuer, as, map[string]func(t *testing.T) outcome{
		"conformance": func(t *testing.T) outcome { return betterAuthConformance(t, newCLI(t, bin), rs.MCPURL) },
		"DPoP":        func(t *testing.T) outcome { return dpopBearerOnly(t, newCLI(t, bin), rs.MCPURL) },
		"device":      func(t *testing.T) outcome { return deviceLogin(t, newCLI(t, bin), rs.MCPURL) },
		"machine": func(t *testing.T) outcome {
			b, err := os.ReadFile(machineFile)
			if err != nil {
				t.Fatal(err)
			}
			var client struct {
				ID     string `json:"client_id"`
				Secret string `json:"client_secret"`
			}
			if err := json.Unmarshal(b, &client); err != nil || client.ID == "" || client.Secret == "" {
				t.Fatalf("the machine client file %s: %v", machineFile, err)
			}
			args := []string{"login", rs.MCPURL, "--client-credentials", "--client-id", client.ID, "--client-secret", client.Secret}
			m := newCLI(t, bin)
			m.must(args...) // the default scope carries no offline_access, which the plugin refuses for this grant
			if status := initializeStatus(t, rs.MCPURL, m.token(rs.MCPURL)); status != 200 {
				t.Fatalf("the MCP server answered %d to the client credentials token", status)
			}
			return pass("client credentials with client_secret_basic, a client the plugin's admin API created; the plugin refuses `offline_access` for this grant (`invalid_scope`), which mcpauth does not ask for there (RFC 6749 §4.4.3: no refresh token)")
		},
	})
}

// webRedirectRefusal is what the plugin answers a registration whose
// redirect URIs are http on loopback without application_type native.
const webRedirectRefusal = "web clients require https redirect URIs on non-loopback hosts"

// betterAuthConformance is driverConformance that also counts the checks
// that failed at setup because the plugin refused the suite's own client
// registration: it names no application_type, so the plugin takes web
// (RFC 7591 §2 and OpenID Connect Registration's default), whose redirect
// URIs must be https and not on loopback.
func betterAuthConformance(t *testing.T, c *cli, mcpURL string) outcome {
	_, rep := runWithDriver(t, c, mcpURL)
	t.Logf("verdicts: %v", rep.Summary)
	note := "`--browser-command` with the example driver (`conformance/drivers/formlogin`) on the sign-in and consent pages of as.mjs: " + rep.note()
	setup := 0
	for _, r := range rep.Checks {
		if r.Verdict == "fail" && strings.Contains(r.Reason, webRedirectRefusal) {
			setup++
		}
	}
	if setup > 0 {
		note += fmt.Sprintf("; %d of the fails are at setup: the plugin refuses the suite's client registration (%q), which names no `application_type`, so `web`, whose redirect URIs must be https and not on loopback", setup, webRedirectRefusal)
	}
	return pass(note)
}
