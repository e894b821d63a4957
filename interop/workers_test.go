package interop

import (
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Cloudflare's workers-oauth-provider in a Worker under `wrangler dev`
// (local mode: workerd from npm, KV simulated in a temp dir, telemetry off,
// NODE_ENV=test so miniflare does not fetch its Request.cf data): the
// authorization server and the MCP server it guards are one Worker
// (interop/testdata/workers-oauth-provider/worker.js). Dynamic
// registration, opaque tokens, refresh tokens that rotate with the
// previous one still valid until its successor is used; no device flow, no
// machine grant, no DPoP.
func labWorkers(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/workers-oauth-provider", "@cloudflare/workers-oauth-provider", "workers-oauth-provider")
	port := freePort(t)
	base := "http://127.0.0.1:" + port
	state := t.TempDir()
	as := startNode(t, "wrangler dev", dir, []string{"node_modules/wrangler/bin/wrangler.js", "dev",
		"--ip", "127.0.0.1", "--port", port, "--inspector-port", "0", "--persist-to", state,
		// The provider's floor: KV cannot expire anything sooner.
		"--var", "ACCESS_TTL:60"},
		[]string{"NODE_ENV=test", "WRANGLER_SEND_METRICS=false", "XDG_CONFIG_HOME=" + state, "NO_COLOR=1"},
		nil, base+"/.well-known/oauth-protected-resource/mcp")
	r := g.row("Cloudflare workers-oauth-provider (wrangler dev)", version)
	c := newCLI(t, bin)
	mcpURL := base + "/mcp"
	serverFlowsWith(t, g, r, c, mcpURL, base, as, map[string]func(t *testing.T) outcome{
		"refresh": func(t *testing.T) outcome {
			concurrentRefresh(t, c, mcpURL, as)
			return pass("access tokens live at least 60 s (the provider refuses less: KV's minimum expiry), inside the CLI's 60 s margin, so every command refreshes. Refresh tokens rotate; the previous one stays valid until its successor is first used")
		},
		"device":  func(t *testing.T) outcome { return na("no `device_authorization_endpoint`") },
		"machine": func(t *testing.T) outcome { return na("no client credentials grant in `grant_types_supported`") },
		"DPoP":    func(t *testing.T) outcome { return na("the AS does not advertise DPoP") },
		"proxy": func(t *testing.T) outcome {
			tools, who := c.proxySession(mcpURL, "whoami", nil)
			if !strings.Contains(strings.Join(tools, ","), "whoami") || !strings.Contains(who, `"sub":"alice"`) {
				t.Fatalf("through the proxy: tools %v, whoami %q", tools, who)
			}
			return pass("")
		},
	})
}
