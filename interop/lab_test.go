// Package interop is the interop lab: the mcpauth CLI against
// authorization servers nobody here wrote, each in front of a small MCP
// server that checks their tokens, and MCP clients nobody here wrote
// against the reference server. Every component is installed from its
// registry at a pinned version (interop/testdata/*/package-lock.json; .ci/run
// runs npm ci for each) and started on loopback by the test. Without node or
// a component the tests skip, naming the npm ci that installs it; with
// CI=true they fail.
//
// TestLab's results are README.md's "Tested with" table (table_test.go).
package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// The three tables of the README: the CLI against other authorization
// servers, other clients against mcpauth serve, and the MCP hosts people
// use running mcpauth (hosts_test.go).
var (
	serverFlows = []string{"discover", "login", "token accepted", "ping", "device", "refresh", "proxy", "machine", "DPoP", "conformance"}
	clientFlows = []string{"login (registration)", "login (metadata document)", "device", "refresh", "tools"}
	hostFlows   = []string{"host add", "connect", "after expiry", "helper", "own OAuth"}
)

func TestLab(t *testing.T) {
	bin := buildMCPAuth(t)
	servers := &grid{title: "mcpauth (the CLI) against authorization servers", flows: serverFlows}
	clients := &grid{title: "MCP clients against mcpauth serve", flows: clientFlows}
	hosts := &grid{title: "MCP hosts through mcpauth", flows: hostFlows}
	// A component that skips (not installed) has no row at all, so the
	// grids alone cannot tell that the table would lose it.
	var skipped atomic.Bool
	// Nor can they tell that -run left a component out.
	var declared, started atomic.Int32
	component := func(t *testing.T, name string, fn func(t *testing.T)) {
		declared.Add(1)
		t.Run(name, func(t *testing.T) {
			started.Add(1)
			t.Parallel()
			t.Cleanup(func() {
				if t.Skipped() {
					skipped.Store(true)
				}
			})
			fn(t)
		})
	}
	t.Run("components", func(t *testing.T) {
		component(t, "oidc-provider", func(t *testing.T) { labOIDCProvider(t, bin, servers) })
		component(t, "oauth2-mock-server", func(t *testing.T) { labOAuth2Mock(t, bin, servers) })
		component(t, "workers-oauth-provider", func(t *testing.T) { labWorkers(t, bin, servers) })
		component(t, "better-auth", func(t *testing.T) { labBetterAuth(t, bin, servers) })
		component(t, "hydra", func(t *testing.T) { labHydra(t, bin, servers) })
		component(t, "ts-demo", func(t *testing.T) { labTSDemo(t, bin, servers) })
		component(t, "mcp-remote", func(t *testing.T) { labMCPRemote(t, clients) })
		component(t, "ts-client", func(t *testing.T) { labTSClient(t, clients) })
		component(t, "go-sdk-client", func(t *testing.T) { labGoSDKClient(t, clients) })
		component(t, "inspector", func(t *testing.T) { labInspector(t, clients) })
		component(t, "claude-code", func(t *testing.T) { labClaudeCode(t, bin, hosts) })
		component(t, "codex", func(t *testing.T) { labCodex(t, bin, hosts) })
		component(t, "gemini-cli", func(t *testing.T) { labGeminiCLI(t, bin, hosts) })
		component(t, "opencode", func(t *testing.T) { labOpencode(t, bin, hosts) })
	})
	if skipped.Load() {
		t.Logf("a component was skipped: README.md's table not checked")
	} else if started.Load() < declared.Load() {
		t.Logf("-run left %d of %d components out: README.md's table not checked", declared.Load()-started.Load(), declared.Load())
	} else if servers.complete() && clients.complete() && hosts.complete() {
		checkTables(t, servers, clients, hosts)
	} else {
		t.Logf("not every cell ran or passed: README.md's table not checked")
	}
}

// buildMCPAuth builds the CLI as users get it.
func buildMCPAuth(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpauth")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/mcpauth")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcpauth: %v\n%s", err, out)
	}
	return bin
}
