package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cli is the built mcpauth binary with a config directory and file token
// storage of its own (a fresh machine), and this test binary as its
// browser.
type cli struct {
	t      *testing.T
	bin    string
	env    []string
	browse string // the browser's log
	// configDir is its token folder (MCPAUTH_CONFIG_DIR).
	configDir string
	// loginArgs are added to every mcpauth login by the common flows.
	loginArgs []string
}

func newCLI(t *testing.T, bin string) *cli {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, bin: bin, browse: filepath.Join(t.TempDir(), "browser.log"), configDir: t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPAUTH_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "MCPAUTH_STORAGE=file", "MCPAUTH_CONFIG_DIR="+c.configDir,
		"MCPAUTH_BROWSER="+self, browserEnv+"="+c.browse)
	return c
}

func (c *cli) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs mcpauth and returns its exit code, stdout and stderr.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := c.command(ctx, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// must runs mcpauth and fails the test unless it exits 0.
func (c *cli) must(args ...string) (stdout, stderr string) {
	c.t.Helper()
	code, stdout, stderr := c.run(args...)
	if code != 0 {
		c.t.Fatalf("mcpauth %s: exit %d\nstdout:\n%s\nstderr:\n%s\nbrowser:\n%s", strings.Join(args, " "), code, stdout, stderr, c.browserLog())
	}
	return stdout, stderr
}

func (c *cli) browserLog() string {
	b, err := os.ReadFile(c.browse)
	if err != nil {
		return fmt.Sprintf("(no browser log: %v)", err)
	}
	return string(b)
}

// token returns the stored access token (refreshed if needed).
func (c *cli) token(mcpURL string) string {
	c.t.Helper()
	out, _ := c.must("token", mcpURL)
	tok := strings.TrimSpace(out)
	if tok == "" || strings.ContainsAny(tok, " \n") {
		c.t.Fatalf("mcpauth token printed %q", out)
	}
	return tok
}

var (
	openRE  = regexp.MustCompile(`Open:\s+(\S+)`)
	enterRE = regexp.MustCompile(`Enter:\s+(\S+)`)
)

// device runs mcpauth device and approves the code it shows with the
// lab's browser at the verification URI, typing the code as a person would.
func (c *cli) device(mcpURL string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := c.command(ctx, append([]string{"device", mcpURL}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	var verify, code string
	for sc.Scan() && (verify == "" || code == "") {
		seen.WriteString(sc.Text() + "\n")
		if m := openRE.FindStringSubmatch(sc.Text()); m != nil {
			verify = m[1]
		}
		if m := enterRE.FindStringSubmatch(sc.Text()); m != nil {
			code = m[1]
		}
	}
	var approveErr error
	if verify != "" {
		_, approveErr = browse(verify, map[string]string{"user_code": code}, 30*time.Second)
	}
	rest, _ := io.ReadAll(stderr)
	seen.Write(rest)
	if err := cmd.Wait(); err != nil || approveErr != nil {
		c.t.Fatalf("mcpauth device: %v (approving at %s with %s: %v)\nstdout:\n%s\nstderr:\n%s", err, verify, code, approveErr, out.String(), seen.String())
	}
	return seen.String()
}

// proxySession connects an MCP client (the go-sdk's) to `mcpauth proxy`
// on its stdio, as a desktop host does, calls tools/list and then the tool
// call with args, and returns the tool names and the call's first text.
func (c *cli) proxySession(mcpURL, call string, args map[string]any) (tools []string, text string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr syncbuf.Buffer
	cmd := c.command(ctx, "proxy", mcpURL)
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpauth-interop-host", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		c.t.Fatalf("initialize through mcpauth proxy: %v\nproxy stderr:\n%s", err, stderr.String())
	}
	defer session.Close()
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		c.t.Fatalf("tools/list through mcpauth proxy: %v\n%s", err, stderr.String())
	}
	for _, tool := range list.Tools {
		tools = append(tools, tool.Name)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: call, Arguments: args})
	if err != nil || res.IsError {
		c.t.Fatalf("tools/call %s through mcpauth proxy: %v %+v\n%s", call, err, res, stderr.String())
	}
	if len(res.Content) > 0 {
		if txt, ok := res.Content[0].(*mcp.TextContent); ok {
			text = txt.Text
		}
	}
	return tools, text
}

// initializeStatus sends initialize with token straight to the MCP server and
// returns the HTTP status: whether the server accepts the token.
func initializeStatus(t *testing.T, mcpURL, token string) int {
	t.Helper()
	const req = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpauth-interop","version":"0"}}}`
	r, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(req))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode
}
