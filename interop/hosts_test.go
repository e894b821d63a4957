package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
)

// The MCP hosts people use (Claude Code, Codex, Gemini CLI, opencode),
// each installed from npm at a pinned version and run offline through its
// own commands, with the entry `mcpauth host add` wrote into its config
// file in a fresh HOME, against the reference server. A host's rows:
// `host add` (the host reads the entry as its own), connect (its health
// check connects through mcpauth proxy with a login stored beforehand),
// after expiry (the same once the server's clock has passed the access
// token's lifetime: a refresh, no browser), helper (a header helper that
// runs `mcpauth token --header -o json`, where the host has one) and its
// own OAuth against mcpauth serve, where it runs without a terminal.

// hostEnv is one host's machine: a fresh HOME, the reference server, and
// mcpauth with a login stored in a token folder of its own.
type hostEnv struct {
	t      *testing.T
	srv    *serveEnv
	cli    *cli
	home   string
	work   string // the folder the host runs in
	mcpURL string
	// entry is the name host add gives the server (from its host name).
	entry string
	// browserLog is written if anything the host starts opens a browser.
	browserLog string
	// env is the host's own settings: telemetry and updates off.
	env []string
}

// newHostEnv starts the reference server and logs mcpauth in to it (the
// lab's browser approving at the server's pages as alice).
func newHostEnv(t *testing.T, bin string, env ...string) *hostEnv {
	t.Helper()
	srv := newServeEnv(t)
	home := t.TempDir()
	c := newCLI(t, bin)
	// mcpauth runs in the host's HOME as its user would.
	c.env = append(c.env, serveBrowserEnv+"=1", "HOME="+home)
	h := &hostEnv{t: t, srv: srv, cli: c, home: home, work: filepath.Join(home, "work"), mcpURL: srv.env.URL + "/mcp",
		entry:      strings.NewReplacer(".", "-", ":", "-").Replace(strings.TrimPrefix(srv.env.URL, "http://")),
		browserLog: filepath.Join(t.TempDir(), "browser.log"), env: env}
	if err := os.Mkdir(h.work, 0o700); err != nil {
		t.Fatal(err)
	}
	c.must("login", h.mcpURL)
	return h
}

// tokenFlags are the flags that carry the token folder and storage, in
// host add's entry and in the helper command: hosts run both with an
// environment of their own.
func (h *hostEnv) tokenFlags() []string {
	return []string{"--config-dir", h.cli.configDir, "--storage", "file"}
}

// proxyLine is the command line host add's entry runs, as hosts show it.
func (h *hostEnv) proxyLine() string {
	return strings.Join(append([]string{h.cli.bin, "proxy", h.mcpURL, "--login"}, h.tokenFlags()...), " ")
}

// helperCommand is the header helper's command line.
func (h *hostEnv) helperCommand() string {
	return strings.Join(append([]string{h.cli.bin, "token", "--header", "-o", "json", h.mcpURL}, h.tokenFlags()...), " ")
}

// hostAdd runs mcpauth host add for host in the fresh HOME.
func (h *hostEnv) hostAdd(host string) {
	h.t.Helper()
	h.cli.must(append([]string{"host", "add", host, h.mcpURL}, h.tokenFlags()...)...)
}

// checkEntry fails t unless the host's own view of its config (out) shows
// the entry running mcpauth proxy with host add's flags.
func (h *hostEnv) checkEntry(t *testing.T, out string) {
	t.Helper()
	args := strings.TrimPrefix(h.proxyLine(), h.cli.bin+" ")
	if !strings.Contains(out, h.entry) || !strings.Contains(out, h.cli.bin) || !strings.Contains(out, args) {
		t.Fatalf("the host does not show %q running %s %s:\n%s", h.entry, h.cli.bin, args, out)
	}
}

// hostEnviron is the environment a host runs in: the test's without
// mcpauth's variables, HOME the fresh one, and a browser that approves at
// the reference server and logs to browserLog.
func (h *hostEnv) hostEnviron(browserLog string) []string {
	self, err := os.Executable()
	if err != nil {
		h.t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "MCPAUTH_") && !strings.HasPrefix(k, "XDG_") && k != "HOME" && k != "BROWSER" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+h.home, "NO_COLOR=1", "BROWSER="+self, "MCPAUTH_BROWSER="+self,
		browserEnv+"="+browserLog, serveBrowserEnv+"=1")
	return append(env, h.env...)
}

// run runs the host's program (a native binary, or node with a script) in
// the work folder and returns its combined output; a non-zero exit is
// returned as the error.
func (h *hostEnv) run(t *testing.T, browserLog string, program string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = h.work, h.hostEnviron(browserLog), 5*time.Second
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: no answer within 90 s:\n%s", filepath.Base(program), strings.Join(args, " "), out.String())
	}
	return out.String(), err
}

// must is run that fails t on a non-zero exit.
func (h *hostEnv) must(t *testing.T, program string, args ...string) string {
	t.Helper()
	out, err := h.run(t, h.browserLog, program, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(program), strings.Join(args, " "), err, out)
	}
	return out
}

// noBrowser fails t if anything the host started opened a browser.
func (h *hostEnv) noBrowser(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(h.browserLog); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the host opened a browser:\n%s", b)
	}
}

// connectFlows are the connect and after expiry cells: list is the host's
// health check, which fails t unless it shows the server connected;
// method is what the server must answer with a token meanwhile.
func (h *hostEnv) connectFlows(g *grid, r *gridRow, method string, list func(t *testing.T), note string) {
	h.t.Helper()
	g.flow(h.t, r, "connect", func(t *testing.T) outcome {
		h.srv.served(t, method, func() { list(t) })
		h.noBrowser(t)
		return pass(note)
	})
	// The server's clock moves past the 24-hour access token's lifetime:
	// the proxy the host starts refreshes, with no browser.
	g.flow(h.t, r, "after expiry", func(t *testing.T) outcome {
		h.srv.env.Clock.Advance(25 * time.Hour)
		h.srv.refreshed(t, func() { h.srv.served(t, method, func() { list(t) }) })
		h.noBrowser(t)
		return pass("")
	})
}
