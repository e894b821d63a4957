// Package tsserver is a test helper: it starts an MCP server nobody here
// wrote, the MCP TypeScript SDK's example server simpleStreamableHttp with
// --oauth, which runs a demo OAuth authorization server (dynamic
// registration, PKCE, consent approved at once, opaque tokens checked by
// introspection) beside the MCP server. The SDK is pinned in
// testdata/mcp-ts-server (package.json and package-lock.json; `npm ci
// --prefix testdata/mcp-ts-server` installs it), and
// testdata/mcp-ts-server/serve.mjs runs the example on sockets the test
// opened, so parallel tests never collide on a port.
//
// Without node, or without the installed SDK, Start skips the test with the
// command that installs what is missing; with CI=true it fails instead.
//
// Only test code imports this package.
package tsserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/testenv"
)

// InstallCommand installs the SDK the tests run, from the repository root.
const InstallCommand = "npm ci --prefix testdata/mcp-ts-server"

// Server is a running example server.
type Server struct {
	// MCPURL is the MCP endpoint, as the server names its resource:
	// http://localhost:<port>/mcp.
	MCPURL string
	// AuthURL is the demo authorization server's issuer without the
	// trailing slash its metadata gives it: http://localhost:<port>.
	AuthURL string
	// SDKVersion is the installed @modelcontextprotocol/sdk version.
	SDKVersion string

	dir, node         string
	args              []string // the example's: --oauth, maybe --oauth-strict
	mcpPort, authPort int
	out               *syncbuf.Buffer
	cmd               *exec.Cmd
	exited            chan struct{}
}

// Output is what the server printed so far (stdout and stderr).
func (s *Server) Output() string { return s.out.String() }

// StartupTimeout bounds how long Start waits for both servers to answer.
var StartupTimeout = 60 * time.Second

// Start runs the example server with --oauth on two fresh loopback ports,
// waits until the MCP server and the authorization server both serve their
// metadata, and stops it (its whole process group) when tb ends. Its output
// is logged if tb failed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, "--oauth")
}

// StartStrict is Start with --oauth-strict: the demo provider issues
// tokens only for a resource parameter (RFC 8707) naming this MCP server,
// and the MCP server accepts only tokens issued for it.
func StartStrict(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, "--oauth", "--oauth-strict")
}

func start(tb testing.TB, args ...string) *Server {
	tb.Helper()
	dir, version := Require(tb)
	node, _ := exec.LookPath("node")
	mcpLn, mcpFile := listen(tb, 0)
	authLn, authFile := listen(tb, 0)
	s := &Server{
		SDKVersion: version,
		dir:        dir,
		node:       node,
		args:       args,
		mcpPort:    mcpLn.Addr().(*net.TCPAddr).Port,
		authPort:   authLn.Addr().(*net.TCPAddr).Port,
		out:        &syncbuf.Buffer{},
	}
	s.MCPURL = fmt.Sprintf("http://localhost:%d/mcp", s.mcpPort)
	s.AuthURL = fmt.Sprintf("http://localhost:%d", s.authPort)
	tb.Cleanup(func() {
		s.stop()
		if tb.Failed() {
			tb.Logf("MCP TypeScript SDK %s example server output:\n%s", version, s.out.String())
		}
	})
	s.launch(tb, mcpLn, authLn, mcpFile, authFile)
	return s
}

// Restart stops the server and starts a new one on the same ports, as a
// server restart in production: the demo provider keeps its registered
// clients, codes and tokens in memory, so all of them are gone.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.stop()
	fmt.Fprintf(s.out, "--- mcpauth test: restarted ---\n")
	mcpLn, mcpFile := listen(tb, s.mcpPort)
	authLn, authFile := listen(tb, s.authPort)
	s.launch(tb, mcpLn, authLn, mcpFile, authFile)
}

func (s *Server) stop() {
	if s.cmd != nil {
		StopProcessGroup(s.cmd, s.exited)
		s.cmd = nil
	}
}

func (s *Server) launch(tb testing.TB, mcpLn, authLn *net.TCPListener, mcpFile, authFile *os.File) {
	tb.Helper()
	cmd := exec.Command(s.node, append([]string{"serve.mjs"}, s.args...)...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = s.out, s.out
	// The sockets become fds 3 and 4 in node; serve.mjs listens on them
	// when the example asks for their ports.
	cmd.ExtraFiles = []*os.File{mcpFile, authFile}
	cmd.Env = append(os.Environ(),
		"MCP_PORT="+strconv.Itoa(s.mcpPort),
		"MCP_AUTH_PORT="+strconv.Itoa(s.authPort),
		fmt.Sprintf("MCP_LISTEN_FDS=%d=3,%d=4", s.mcpPort, s.authPort),
	)
	SetProcessGroup(cmd)
	err := cmd.Start()
	// node holds its own copies now; ours would keep the ports open after
	// node died, hiding that it died.
	for _, c := range []io.Closer{mcpFile, authFile, mcpLn, authLn} {
		_ = c.Close()
	}
	if err != nil {
		tb.Fatalf("starting the MCP TypeScript SDK example server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited

	ready := []string{
		fmt.Sprintf("http://127.0.0.1:%d/.well-known/oauth-protected-resource/mcp", s.mcpPort),
		fmt.Sprintf("http://127.0.0.1:%d/.well-known/oauth-authorization-server", s.authPort),
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(StartupTimeout)
	for _, u := range ready {
		for {
			err := Get200(hc, u)
			if err == nil {
				break
			}
			select {
			case <-exited:
				tb.Fatalf("the MCP TypeScript SDK example server exited before serving %s (%v):\n%s", u, cmd.ProcessState, s.out.String())
			default:
			}
			if time.Now().After(deadline) {
				tb.Fatalf("the MCP TypeScript SDK example server did not serve %s within %s (%v):\n%s", u, StartupTimeout, err, s.out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// Require returns the example's directory and the installed SDK version,
// or ends tb (a skip, or a failure with CI=true) when node or the SDK is
// missing.
func Require(tb testing.TB) (dir, version string) {
	tb.Helper()
	return RequirePackage(tb, "mcp-ts-server", "@modelcontextprotocol/sdk", "MCP TypeScript SDK server")
}

// RequirePackage returns testdata/<subdir> and the version of the npm
// package pkg installed there, which its package.json pins exactly, or
// ends tb when node (20 or newer) or that exact version is missing: a skip
// naming `npm ci --prefix testdata/<subdir>`, or a failure with CI=true,
// where .ci/run has installed it. what names the package in the message.
func RequirePackage(tb testing.TB, subdir, pkg, what string) (dir, version string) {
	tb.Helper()
	return RequireNodePackage(tb, "testdata/"+subdir, pkg, what)
}

// RequireNodePackage is RequirePackage for any directory of the
// repository, given slash-separated from its root (interop/testdata/…).
func RequireNodePackage(tb testing.TB, rel, pkg, what string) (dir, version string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("%s test: skipped with -short", what) // node processes: the slow end of the suite
	}
	root, err := repoRoot()
	if err != nil {
		tb.Fatalf("finding the repository root: %v", err)
	}
	dir = filepath.Join(root, filepath.FromSlash(rel))
	install := "npm ci --prefix " + rel
	node, err := exec.LookPath("node")
	if err != nil {
		Unavailable(tb, what, "no node on PATH", "install Node.js 20 or newer with npm, then "+install)
	}
	if v, err := exec.Command(node, "-p", "process.versions.node").Output(); err != nil {
		Unavailable(tb, what, fmt.Sprintf("%s does not run: %v", node, err), "install Node.js 20 or newer")
	} else if major, _, _ := strings.Cut(strings.TrimSpace(string(v)), "."); atoi(major) < 20 {
		// The SDK says 18, but its Streamable HTTP server imports
		// @hono/node-server, which needs 20.
		Unavailable(tb, what, fmt.Sprintf("node %s is too old for the %s", strings.TrimSpace(string(v)), what), "install Node.js 20 or newer")
	}
	want, err := pinned(filepath.Join(dir, "package.json"), pkg)
	if err != nil {
		tb.Fatalf("reading the pinned %s version: %v", pkg, err)
	}
	got, err := packageVersion(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		Unavailable(tb, what, fmt.Sprintf("%s is not installed in %s", pkg, rel), install)
	case err != nil:
		tb.Fatalf("reading the installed %s version: %v", pkg, err)
	case got != want:
		Unavailable(tb, what, fmt.Sprintf("%s has %s %s installed, package.json pins %s", rel, pkg, got, want), install)
	}
	return dir, got
}

// Unavailable skips tb with a one-line reason and the command that fixes
// it, or fails it under CI=true, where these tests must run.
func Unavailable(tb testing.TB, what, why, fix string) {
	tb.Helper()
	// Through testenv, so a terminal hears of the skip without -v.
	testenv.Missing(tb, testenv.Node, fmt.Sprintf("%s: %s (run: %s)", what, why, fix))
}

// listen opens a loopback socket on port (0: a free one). A given port was
// just freed by a stopped server; it is retried for a few seconds in case
// the kernel still holds it.
func listen(tb testing.TB, port int) (*net.TCPListener, *os.File) {
	tb.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil || port == 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	tl := ln.(*net.TCPListener)
	f, err := tl.File()
	if err != nil {
		tb.Fatal(err)
	}
	return tl, f
}

// Get200 fetches u and fails unless it answers 200 (a readiness probe).
func Get200(hc *http.Client, u string) error {
	resp, err := hc.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}

// repoRoot is the directory of this module's go.mod, found upwards from the
// working directory (go test runs in the package's directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/mcpauth/mcpauth\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/mcpauth/mcpauth above the working directory")
		}
		dir = parent
	}
}

func pinned(packageJSON, pkg string) (string, error) {
	var p struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", packageJSON, err)
	}
	v := p.Dependencies[pkg]
	if v == "" || strings.ContainsAny(v, "^~<>=* ") {
		return "", fmt.Errorf("%s: %s must be pinned to an exact version, not %q", packageJSON, pkg, v)
	}
	return v, nil
}

func packageVersion(packageJSON string) (string, error) {
	var p struct {
		Version string `json:"version"`
	}
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", packageJSON, err)
	}
	return p.Version, nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// Approve is a browser for the demo authorization server: it opens
// authURL and follows redirects, keeping cookies, until the request that
// leaves the authorization server for a loopback redirect URI (a CLI's
// callback listener), and returns that URL. The demo provider needs no
// sign-in and no consent click: /authorize answers with a redirect to the
// client's redirect URI carrying the code (or, for a bad request, an
// error). The callback is requested too, as a browser would, so the CLI
// receives the code.
func Approve(authURL string, timeout time.Duration) (callback *url.URL, err error) {
	start, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{
		Jar:     jar,
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("more than 10 redirects")
			}
			if req.URL.Host != start.Host {
				callback = req.URL
			}
			return nil
		},
	}
	resp, err := hc.Get(authURL)
	if err != nil {
		return callback, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if callback == nil {
		return nil, fmt.Errorf("the authorization server answered %s without redirecting: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if resp.StatusCode != http.StatusOK {
		return callback, fmt.Errorf("the callback %s answered %s: %s", callback.Redacted(), resp.Status, strings.TrimSpace(string(body)))
	}
	return callback, nil
}
