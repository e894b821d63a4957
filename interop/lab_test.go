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
	"testing"
)

// The two tables of the README: the CLI against other authorization
// servers, and other clients against mcpauth serve.
var (
	serverFlows = []string{"discover", "login", "token accepted", "ping", "device", "refresh", "proxy", "machine", "DPoP", "conformance"}
	clientFlows = []string{"login (registration)", "login (metadata document)", "device", "refresh", "tools"}
)

func TestLab(t *testing.T) {
	bin := buildMCPAuth(t)
	servers := &grid{title: "mcpauth (the CLI) against authorization servers", flows: serverFlows}
	clients := &grid{title: "MCP clients against mcpauth serve", flows: clientFlows}
	t.Run("components", func(t *testing.T) {
		t.Run("oidc-provider", func(t *testing.T) { t.Parallel(); labOIDCProvider(t, bin, servers) })
		t.Run("oauth2-mock-server", func(t *testing.T) { t.Parallel(); labOAuth2Mock(t, bin, servers) })
		t.Run("workers-oauth-provider", func(t *testing.T) { t.Parallel(); labWorkers(t, bin, servers) })
		t.Run("ts-demo", func(t *testing.T) { t.Parallel(); labTSDemo(t, bin, servers) })
		t.Run("mcp-remote", func(t *testing.T) { t.Parallel(); labMCPRemote(t, clients) })
		t.Run("ts-client", func(t *testing.T) { t.Parallel(); labTSClient(t, clients) })
		t.Run("go-sdk-client", func(t *testing.T) { t.Parallel(); labGoSDKClient(t, clients) })
		t.Run("inspector", func(t *testing.T) { t.Parallel(); labInspector(t, clients) })
	})
	if servers.complete() && clients.complete() {
		checkREADME(t, servers, clients)
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
