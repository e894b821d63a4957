package root_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// These tests drive the whole CLI (root.Run with a test Factory) against the
// reference server in-process: real HTTP on loopback, real flows, real file
// storage in a temp dir. Only the person is simulated: a browser-like HTTP
// client signs in at the development identity provider and presses buttons.

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls the buffer until re matches (bounded).
func (b *syncBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	for i := 0; i < 500; i++ {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in output:\n%s", re, b.String())
	return nil
}

type cli struct {
	t    *testing.T
	env  *servertest.Env
	vars map[string]string
	// open stands in for the person's browser during login (nil: the
	// factory decides from the environment, as in production).
	open  func(string) error
	clock flows.Clock
	stdin string
	// tty makes stdin and stderr terminals (prompts, Enter, countdown).
	tty bool
	// backend replaces the OS keyring (nil: the real one, never reached
	// with MCPAUTH_STORAGE=file).
	backend        keyring.Backend
	keyringTimeout time.Duration
	// wrap adjusts the factory after it is built (e.g. its HTTP client).
	wrap func(*cmdutil.Factory)
}

// newCLI stores tokens in files in a temp dir and points the proxy
// variables at a dead proxy: every test also proves loopback is never
// proxied.
func newCLI(t *testing.T, env *servertest.Env) *cli {
	return &cli{t: t, env: env, vars: map[string]string{
		"MCPAUTH_CONFIG_DIR": t.TempDir(),
		"MCPAUTH_STORAGE":    "file",
		"HTTP_PROXY":         "http://127.0.0.1:9",
		"HTTPS_PROXY":        "http://127.0.0.1:9",
	}, clock: flows.RealClock{}}
}

// run executes the CLI and returns exit code, stdout and stderr.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	return c.runWith(out, errOut, args...), out.String(), errOut.String()
}

func (c *cli) factory(out, errOut io.Writer) *cmdutil.Factory {
	ios := &cmdutil.IOStreams{In: strings.NewReader(c.stdin), Out: out, ErrOut: errOut, StdinTTY: c.tty, StderrTTY: c.tty}
	f := cmdutil.New(ios, func(k string) string { return c.vars[k] })
	f.Clock = c.clock
	f.OpenBrowser = c.open
	f.KeyringBackend = c.backend
	f.KeyringTimeout = c.keyringTimeout
	if c.wrap != nil {
		c.wrap(f)
	}
	return f
}

func (c *cli) runWith(out, errOut *syncBuffer, args ...string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return root.Run(ctx, c.factory(out, errOut), args)
}

// approvingBrowser signs in as user, presses action on the consent page and
// follows the redirect to the CLI's loopback listener, as a browser would.
func approvingBrowser(t *testing.T, env *servertest.Env, user, action string) func(string) error {
	b := env.Browser(user)
	return func(authURL string) error {
		back, err := b.Consent(context.Background(), authURL, action)
		if err != nil {
			t.Errorf("browser: %v", err)
			return err
		}
		resp, err := http.Get(back.String())
		if err != nil {
			t.Errorf("browser: following redirect to the CLI: %v", err)
			return err
		}
		resp.Body.Close()
		return nil
	}
}

func TestLoginPingTokenStatusLogout(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = approvingBrowser(t, env, "alice", "approve")
	mcp := env.URL + "/mcp"

	code, stdout, loginErr := c.run("login", mcp)
	if code != 0 || stdout != "" {
		t.Fatalf("login exit %d, stdout %q: %s", code, stdout, loginErr)
	}

	code, stdout, stderr := c.run("ping")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), "u_") {
		t.Fatalf("ping exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	userID := strings.TrimSpace(stdout)
	if !regexp.MustCompile(`Logged in to ` + regexp.QuoteMeta(mcp) + ` as alice \(` + userID + `\) \(token expires 20\d\d-`).MatchString(loginErr) {
		t.Fatalf("login said: %s", loginErr)
	}

	code, stdout, _ = c.run("token")
	tok := strings.TrimSpace(stdout)
	if code != 0 || strings.Count(tok, ".") != 2 {
		t.Fatalf("token exit %d: %q", code, stdout)
	}
	code, stdout, _ = c.run("token", "--header")
	if code != 0 || strings.TrimSpace(stdout) != "Authorization: Bearer "+tok {
		t.Fatalf("token --header: %q", stdout)
	}

	// The printed token works with any HTTP client.
	req, _ := http.NewRequest("GET", env.URL+"/api/ping", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ping with printed token: %v %v", resp, err)
	}
	resp.Body.Close()

	code, stdout, _ = c.run("status", "--output", "json")
	var entries []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &entries) != nil || len(entries) != 1 {
		t.Fatalf("status: exit %d %s", code, stdout)
	}
	if entries[0]["server"] != mcp || entries[0]["backend"] != "file" || entries[0]["kind"] != "oauth" {
		t.Fatalf("status entry %v", entries[0])
	}

	// A second login reuses the cached registration: no new client.
	code, _, stderr = c.run("login", mcp, "--debug")
	if code != 0 {
		t.Fatalf("second login: %s", stderr)
	}
	if strings.Contains(stderr, "POST "+env.URL+"/oauth/register") {
		t.Fatal("second login registered a new client instead of using the cached one")
	}
	if strings.Contains(stderr, tok) {
		t.Fatal("--debug output leaks the access token")
	}
	for _, leak := range regexp.MustCompile(`(code|code_verifier|access_token)=([A-Za-z0-9_\-.~]{20,})`).FindAllStringSubmatch(stderr, -1) {
		t.Fatalf("--debug output leaks %s=%s", leak[1], leak[2])
	}

	code, _, stderr = c.run("logout")
	if code != 0 || !strings.Contains(stderr, "Logged out of "+mcp+" (default)") {
		t.Fatalf("logout: exit %d %s", code, stderr)
	}
	code, _, stderr = c.run("ping")
	if code != cmdutil.ExitAuthRequired || !strings.Contains(stderr, "mcpauth login") {
		t.Fatalf("ping after logout: exit %d %s", code, stderr)
	}
	code, _, _ = c.run("token", mcp)
	if code != cmdutil.ExitAuthRequired {
		t.Fatalf("token after logout: exit %d", code)
	}
}

func TestLoginDeniedExits4(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = approvingBrowser(t, env, "bob", "deny")
	code, _, stderr := c.run("login", env.URL+"/mcp")
	if code != cmdutil.ExitDenied || !strings.Contains(stderr, "denied") {
		t.Fatalf("exit %d, want %d: %s", code, cmdutil.ExitDenied, stderr)
	}
}

func TestTokenExpiredExits3(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	c.open = approvingBrowser(t, env, "carol", "approve")
	clk := &shiftClock{}
	c.clock = clk
	if code, _, stderr := c.run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	clk.shift = 25 * time.Hour
	code, stdout, stderr := c.run("token")
	if code != cmdutil.ExitAuthRequired || stdout != "" || !strings.Contains(stderr, "expired") {
		t.Fatalf("expired token: exit %d stdout %q stderr %s", code, stdout, stderr)
	}
}

func TestMCPAUTHTokenOverrides(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("dave").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, env)
	c.vars["MCPAUTH_TOKEN"] = key
	code, stdout, stderr := c.run("ping", env.URL+"/mcp")
	if code != 0 || !strings.HasPrefix(stdout, "u_") {
		t.Fatalf("ping with MCPAUTH_TOKEN: %d %q %s", code, stdout, stderr)
	}
	// token needs no server; ping needs one to know where /api/ping is.
	if code, stdout, _ := c.run("token", "--header"); code != 0 || stdout != "Authorization: Bearer "+key+"\n" {
		t.Fatalf("token with MCPAUTH_TOKEN: %d %q", code, stdout)
	}
	if code, _, stderr := c.run("ping"); code != cmdutil.ExitUsage || !strings.Contains(stderr, "MCPAUTH_TOKEN") {
		t.Fatalf("ping without a server: %d %s", code, stderr)
	}
	// Storage is never opened: CI without a keyring works in auto mode.
	delete(c.vars, "MCPAUTH_STORAGE")
	c.backend, c.keyringTimeout = newHangingBackend(t), 100*time.Millisecond
	if code, _, stderr := c.run("ping", env.URL); code != 0 {
		t.Fatalf("ping with MCPAUTH_TOKEN and no keyring: %d %s", code, stderr)
	}
	c.vars["MCPAUTH_TOKEN"] = "garbage"
	code, _, stderr = c.run("ping", env.URL+"/mcp")
	if code != cmdutil.ExitAuthRequired || strings.Contains(stderr, "garbage") {
		t.Fatalf("garbage MCPAUTH_TOKEN: exit %d, want 3: %s", code, stderr)
	}
}

func TestAPIKeySetThenPing(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("erin").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, env)
	c.stdin = key + "\n"
	code, stdout, stderr := c.run("apikey", "set", env.URL)
	if code != 0 || stdout != "" || strings.Contains(stderr, key) {
		t.Fatalf("apikey set: exit %d, stdout %q (the key must never be echoed), stderr %s", code, stdout, stderr)
	}
	c.stdin = "  \n"
	if code, _, stderr := c.run("apikey", "set", env.URL); code != cmdutil.ExitUsage || !strings.Contains(stderr, "no API key") {
		t.Fatalf("empty key: exit %d %s", code, stderr)
	}
	c.stdin = ""
	code, stdout, stderr = c.run("status")
	if code != 0 || !strings.Contains(stdout, "api_key") || !strings.Contains(stdout, "no expiry") || strings.Contains(stdout, key) {
		t.Fatalf("status after apikey set: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := c.run("token"); code != 0 || strings.TrimSpace(stdout) != key {
		t.Fatalf("token with a stored API key: exit %d %q", code, stdout)
	}
	code, stdout, stderr = c.run("ping", "-o", "json")
	var got map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || got["status"] != "ok" {
		t.Fatalf("ping with stored key: %d %s %s", code, stdout, stderr)
	}
	// Regenerating the key in Settings makes the stored one fail at once.
	if _, err := env.Browser("erin").RegenerateAPIKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := c.run("ping"); code != cmdutil.ExitAuthRequired {
		t.Fatalf("ping with a regenerated-away key: exit %d, want 3", code)
	}
}

// shiftClock is the real clock moved forward by shift (to age tokens).
type shiftClock struct{ shift time.Duration }

func (c *shiftClock) Now() time.Time                         { return time.Now().Add(c.shift) }
func (c *shiftClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func TestRegisterCachesForLogin(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := newCLI(t, env)
	code, stdout, stderr := c.run("register", env.URL+"/mcp", "-o", "json")
	var ci struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &ci) != nil || ci.ClientID == "" || len(ci.RedirectURIs) != 3 || len(ci.GrantTypes) != 2 {
		t.Fatalf("register: %d %s %s", code, stdout, stderr)
	}
	c.open = approvingBrowser(t, env, "ivan", "approve")
	code, _, stderr = c.run("login", env.URL+"/mcp", "--debug")
	if code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	if strings.Contains(stderr, "POST "+env.URL+"/oauth/register") || !strings.Contains(stderr, "client_id="+ci.ClientID) {
		t.Fatalf("login did not use the client registered by `mcpauth register` (%s):\n%s", ci.ClientID, stderr)
	}
	// A device-only registration is not cached for login and has no redirect URIs.
	code, stdout, _ = c.run("register", env.URL+"/mcp", "--device", "-o", "json")
	if code != 0 || !strings.Contains(stdout, "urn:ietf:params:oauth:grant-type:device_code") {
		t.Fatalf("register --device: %d %s", code, stdout)
	}
}

func TestQuietKeepsStderrForErrors(t *testing.T) {
	c := newCLI(t, nil)
	if code, _, stderr := c.run("status"); code != 0 || !strings.Contains(stderr, "No stored credentials") {
		t.Fatalf("status: %d %q", code, stderr)
	}
	if code, stdout, stderr := c.run("status", "--quiet"); code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("status --quiet: %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := c.run("token", "-q"); code != cmdutil.ExitAuthRequired || !strings.Contains(stderr, "mcpauth login") {
		t.Fatalf("token -q: errors still show: %d %q", code, stderr)
	}
}
