// Command client is the client command the MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/mcp-conformance)
// runs for its auth scenarios: the mcpauth CLI used as a person, a machine
// or a desktop host would use it.
//
//	conformance client --command "client" --scenario auth/metadata-default
//
// The suite appends the scenario's MCP URL and sets MCP_CONFORMANCE_SCENARIO,
// MCP_CONFORMANCE_PROTOCOL_VERSION and, for scenarios that hand the client
// credentials, MCP_CONFORMANCE_CONTEXT (JSON). The client then
//
//  1. logs in with `mcpauth login <url>`: in the "browser" for most
//     scenarios (this program again, `client browse <url>`, follows the
//     authorization URL to the CLI's loopback callback: the scenarios'
//     authorization endpoints approve at once), or as a machine with the
//     scenario's credentials (client credentials with a secret or
//     private_key_jwt, a pre-registered client, the JWT bearer grant,
//     enterprise-managed authorization);
//  2. runs `mcpauth proxy --login <url>` as a desktop host would, and sends
//     initialize, tools/list and tools/call through it (a go-sdk client on
//     the proxy's stdio, at the scenario's protocol version).
//
// Each run has its own MCPAUTH_CONFIG_DIR with file storage, removed at the
// end; the user's other MCPAUTH_* settings are left out. The mcpauth binary
// is $MCPAUTH_BIN, else mcpauth on PATH. Exit 0 when every step succeeded,
// 1 otherwise (the suite judges the checks, not the exit code alone).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// cimdURL is the client ID metadata document URL the suite's CIMD scenario
// expects as client_id (its authorization server does not fetch it).
const cimdURL = "https://conformance-test.local/client-metadata.json"

// stepTimeout bounds each mcpauth command and the host's session; the
// suite's own --timeout (the Go test passes 90 s) bounds the whole run.
const stepTimeout = 25 * time.Second

func main() {
	if len(os.Args) == 3 && os.Args[1] == "browse" {
		os.Exit(browse(os.Args[2]))
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client <mcp-url>   (run by: conformance client --command client --scenario auth/…)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		logf("FAILED: %v", err)
		os.Exit(1)
	}
	logf("done")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "client: "+format+"\n", args...)
}

// browse is the browser stand-in: it follows the authorization URL until
// the CLI's loopback callback has been requested.
func browse(authURL string) int {
	callback, err := tsserver.Approve(authURL, stepTimeout)
	fmt.Fprintf(os.Stderr, "browse: opened %s, callback %v, err %v\n", authURL, callback, err)
	if err != nil {
		return 1
	}
	return 0
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT: the union of the fields the
// suite's scenarios hand their client.
type scenarioContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

type client struct {
	bin, url, dir string
	env           []string
}

func run(url string) error {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	var sc scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	logf("scenario %q, protocol version %q, server %s", scenario, version, url)

	bin := os.Getenv("MCPAUTH_BIN")
	if bin == "" {
		bin = "mcpauth"
	}
	bin, err := exec.LookPath(bin)
	if err != nil {
		return fmt.Errorf("the mcpauth binary (set MCPAUTH_BIN): %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcpconf-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	c := &client{bin: bin, url: url, dir: dir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPAUTH_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env,
		"MCPAUTH_STORAGE=file",
		"MCPAUTH_CONFIG_DIR="+filepath.Join(dir, "config"),
		"MCPAUTH_BROWSER="+self+" browse",
		"MCPAUTH_CLIENT_METADATA_URL="+cimdURL,
	)

	args, env, err := c.loginArgs(scenario, sc)
	if err != nil {
		return err
	}
	if err := c.mcpauth(env, args...); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	return c.host(version)
}

// loginArgs is the `mcpauth login` a user of the scenario would run, with
// the secrets in the environment, never on the command line.
func (c *client) loginArgs(scenario string, sc scenarioContext) (args, env []string, err error) {
	args = []string{"login", c.url, "--timeout", "20s"}
	switch scenario {
	case "auth/client-credentials-basic":
		args = append(args, "--client-credentials", "--client-id", sc.ClientID)
		env = append(env, "MCPAUTH_CLIENT_SECRET="+sc.ClientSecret)
	case "auth/client-credentials-jwt":
		key := filepath.Join(c.dir, "client-key.pem")
		if err := os.WriteFile(key, []byte(sc.PrivateKeyPEM), 0o600); err != nil {
			return nil, nil, err
		}
		args = append(args, "--client-credentials", "--client-id", sc.ClientID, "--private-key-file", key)
		if sc.SigningAlgorithm != "" {
			args = append(args, "--signing-alg", sc.SigningAlgorithm)
		}
	case "auth/pre-registration":
		args = append(args, "--client-id", sc.ClientID)
		env = append(env, "MCPAUTH_CLIENT_SECRET="+sc.ClientSecret)
	case "auth/wif-jwt-bearer":
		args = append(args, "--client-id", sc.ClientID)
		env = append(env, "MCPAUTH_JWT_BEARER_ASSERTION="+sc.ValidJWT)
	case "auth/enterprise-managed-authorization":
		idToken := filepath.Join(c.dir, "id_token.jwt")
		if err := os.WriteFile(idToken, []byte(sc.IDPIDToken), 0o600); err != nil {
			return nil, nil, err
		}
		args = append(args, "--client-id", sc.ClientID, "--id-token-file", idToken,
			"--idp-token-endpoint", sc.IDPTokenEndpoint, "--idp-client-id", sc.IDPClientID)
		env = append(env, "MCPAUTH_CLIENT_SECRET="+sc.ClientSecret)
	}
	return args, env, nil
}

// mcpauth runs the CLI with the client's environment plus env, its output
// passed on to stderr.
func (c *client) mcpauth(env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	logf("$ mcpauth %s", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = append(append([]string{}, c.env...), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// host is a desktop host on `mcpauth proxy --login`: initialize (or, at
// 2026-07-28, server/discover), tools/list, and a call of the scenario's
// tool (test-tool, else the first one listed).
func (c *client) host(version string) error {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	logf("$ mcpauth proxy --login %s  (host: initialize, tools/list, tools/call)", c.url)
	cmd := exec.Command(c.bin, "proxy", "--login", c.url)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	host := mcp.NewClient(&mcp.Implementation{Name: "mcpauth-conformance-host", Version: "1.0.0"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := host.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, opts)
	if err != nil {
		return fmt.Errorf("initialize through the proxy: %w", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list through the proxy: %w", err)
	}
	if len(tools.Tools) == 0 {
		logf("tools/list: no tools, nothing to call")
		return nil
	}
	name := tools.Tools[0].Name
	for _, t := range tools.Tools {
		if t.Name == "test-tool" {
			name = t.Name
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("tools/call %s through the proxy: %w", name, err)
	}
	if res.IsError {
		return errors.New("tools/call " + name + ": the tool answered isError")
	}
	logf("%d tools; tools/call %s ok", len(tools.Tools), name)
	return nil
}
