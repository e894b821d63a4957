package login_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/login"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// These run login.Run with injected streams against the reference server
// (servertest, real HTTP on loopback) or a plain httptest server, and
// tokens in files under a temp dir.

func factory(t *testing.T, dir string, open func(string) error) (*cmdutil.Factory, *clitest.Buffer) {
	errOut := &clitest.Buffer{}
	ios := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut}
	vars := map[string]string{"MCPAUTH_CONFIG_DIR": dir}
	f := cmdutil.New(ios, func(k string) string { return vars[k] })
	f.Globals.Storage, f.Globals.Account = "file", "default"
	f.OpenBrowser = open
	return f, errOut
}

// approve signs in as user, approves consent and follows the redirect back
// to login's loopback listener, as a browser would.
func approve(t *testing.T, env *servertest.Env, user string) func(string) error {
	b := env.Browser(user)
	return func(authURL string) error {
		back, err := b.Consent(context.Background(), authURL, "approve")
		if err != nil {
			return err
		}
		resp, err := http.Get(back.String())
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
}

func TestLoginNamesTheUserAndWarnsBeforeReplacing(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	dir := t.TempDir()
	mcp := env.URL + "/mcp"

	f, errOut := factory(t, dir, approve(t, env, "mona"))
	if err := login.Run(context.Background(), &login.Options{F: f, Target: mcp}); err != nil {
		t.Fatalf("login: %v\n%s", err, errOut)
	}
	first := regexp.MustCompile(`✓ Logged in to ` + regexp.QuoteMeta(mcp) + ` as mona \((u_[\w-]+)\) \(token expires `).FindStringSubmatch(errOut.String())
	if first == nil {
		t.Fatalf("no success line with the name:\n%s", errOut)
	}
	if strings.Contains(errOut.String(), "will be replaced") {
		t.Fatalf("first login spoke of replacing:\n%s", errOut)
	}

	f, errOut = factory(t, dir, approve(t, env, "mona"))
	if err := login.Run(context.Background(), &login.Options{F: f, Target: mcp}); err != nil {
		t.Fatalf("second login: %v\n%s", err, errOut)
	}
	want := fmt.Sprintf(`A credential for %s is already stored (account "default": OAuth token for mona (%s), expires `, mcp, first[1])
	if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "; it will be replaced if this login succeeds.") {
		t.Fatalf("no replace notice %q:\n%s", want, errOut)
	}
	// Said before the browser opens, not after.
	if strings.Index(errOut.String(), "will be replaced") > strings.Index(errOut.String(), "✓ Logged in") {
		t.Fatalf("replace notice after the fact:\n%s", errOut)
	}
}

// Ctrl-C while the browser is out: the message says so, exit 130.
func TestLoginCancelledWhileWaitingForTheBrowser(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, errOut := factory(t, t.TempDir(), func(string) error { cancel(); return nil })
	err := login.Run(ctx, &login.Options{F: f, Target: env.URL + "/mcp"})
	if err == nil || err.Error() != "login cancelled while waiting for the browser" || clierr.CodeFor(err) != clierr.ExitCancelled {
		t.Fatalf("got %v (exit %d)\n%s", err, clierr.CodeFor(err), errOut)
	}
	if strings.Contains(err.Error(), "context canceled") {
		t.Fatal("bare context canceled")
	}
}

func TestLoginCancelledWhileDiscovering(t *testing.T) {
	hang := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	// The first probe reaches a server that never answers; then Ctrl-C.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cancel(); <-hang }))
	defer srv.Close()
	defer close(hang)
	f, _ := factory(t, t.TempDir(), func(string) error { return nil })
	err := login.Run(ctx, &login.Options{F: f, Target: srv.URL + "/mcp"})
	if err == nil || err.Error() != "login cancelled while discovering "+srv.URL+"/mcp" || clierr.CodeFor(err) != clierr.ExitCancelled {
		t.Fatalf("got %v (exit %d)", err, clierr.CodeFor(err))
	}
}

func TestLoginErrorsSayWhatToDo(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	busy, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	host := strings.TrimPrefix(env.URL, "http://")

	for _, tt := range []struct {
		name, target string
		port         int
		code         int
		want         string
	}{
		{"no scheme", host + "/mcp", 0, clierr.ExitUsage, fmt.Sprintf(`%q is not a URL; did you mean http://%s/mcp?`, host+"/mcp", host)},
		{"unreachable", "http://" + deadAddr + "/mcp", 0, clierr.ExitNetwork, "cannot reach " + deadAddr + " (connection refused)"},
		{"not MCP at all", notMCP.URL + "/", 0, clierr.ExitNetwork, notMCP.URL + "/ is not an MCP server: " + notMCP.URL + "/mcp answered HTTP 404 (not found). An MCP URL names the server's MCP endpoint, like https://mcp.example.com/mcp; the server's documentation gives its path"},
		{"another page of an MCP server", env.URL + "/settings", 0, clierr.ExitNetwork, env.URL + "/settings is not an MCP endpoint: it answered HTTP "},
		{"busy port", env.URL + "/mcp", busyPort, clierr.ExitUsage, fmt.Sprintf("port %d on 127.0.0.1 is already in use (another program, or another mcpauth login); try --port ", busyPort)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opened := false
			f, errOut := factory(t, t.TempDir(), func(string) error { opened = true; return nil })
			err := login.Run(context.Background(), &login.Options{F: f, Target: tt.target, Port: tt.port})
			if err == nil || !strings.Contains(err.Error(), tt.want) || clierr.CodeFor(err) != tt.code {
				t.Fatalf("got %v (exit %d), want %q (exit %d)\n%s", err, clierr.CodeFor(err), tt.want, tt.code, errOut)
			}
			if opened {
				t.Fatal("a browser was opened")
			}
		})
	}
}

func TestLoginWithoutArgumentNamesIt(t *testing.T) {
	f, _ := factory(t, t.TempDir(), nil)
	cmd := login.NewCmd(f, func(context.Context, *login.Options) error { return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "missing <mcp-url>, the MCP server's URL: login <mcp-url>") || clierr.CodeFor(err) != clierr.ExitUsage {
		t.Fatalf("got %v (exit %d)", err, clierr.CodeFor(err))
	}
}

// The client secret never has to be on the command line.
func TestClientSecretFromStdinFileOrEnv(t *testing.T) {
	run := func(args []string, stdin string, env map[string]string) (string, error) {
		ios := &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		f := cmdutil.New(ios, func(k string) string { return env[k] })
		var got string
		cmd := login.NewCmd(f, func(_ context.Context, o *login.Options) error { got = o.ClientSecret; return nil })
		cmd.SetArgs(append([]string{"http://127.0.0.1:8080/mcp", "--client-id", "c1"}, args...))
		err := cmd.Execute()
		return got, err
	}
	file := t.TempDir() + "/secret"
	if err := os.WriteFile(file, []byte("s-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args  []string
		stdin string
		env   map[string]string
		want  string
	}{
		{[]string{"--client-secret", "-"}, "s-stdin\n", nil, "s-stdin"},
		{[]string{"--client-secret-file", file}, "", nil, "s-file"},
		{nil, "", map[string]string{"MCPAUTH_CLIENT_SECRET": "s-env"}, "s-env"},
	} {
		got, err := run(tt.args, tt.stdin, tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%v: %q %v, want %q", tt.args, got, err, tt.want)
		}
	}
}
