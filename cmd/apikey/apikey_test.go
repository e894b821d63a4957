package apikey_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/apikey"
	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/ping"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/server/servertest"
)

type run struct {
	f           *cmdutil.Factory
	out, errOut *bytes.Buffer
}

func newRun(dir, stdin string) run {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	ios := &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut}
	vars := map[string]string{"MCPAUTH_CONFIG_DIR": dir}
	f := cmdutil.New(ios, func(k string) string { return vars[k] })
	f.Globals.Storage, f.Globals.Account = "file", "default"
	return run{f, out, errOut}
}

func (r run) stored(t *testing.T) int {
	st, err := r.f.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	l, err := creds.List(st)
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// The URL is checked by discovery and the key by one /api/ping before
// anything is stored; the name the server gives is kept for status.
func TestSetChecksURLAndKey(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key, err := env.Browser("mona").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := newRun(dir, key+"\n")
	if err := apikey.RunSet(context.Background(), &apikey.Options{F: r.f, Server: env.URL}); err != nil {
		t.Fatalf("set: %v\n%s", err, r.errOut)
	}
	ok := regexp.MustCompile(`✓ API key of mona \((u_[\w-]+)\) checked and stored for ` + regexp.QuoteMeta(env.URL+"/mcp") + ` \(file\)`).FindStringSubmatch(r.errOut.String())
	if ok == nil {
		t.Fatalf("no success line:\n%s", r.errOut)
	}
	if strings.Contains(r.errOut.String(), key) {
		t.Fatal("the key was echoed")
	}

	// ping uses it and names the user.
	p := newRun(dir, "")
	if err := ping.Run(context.Background(), &ping.Options{F: p.f}); err != nil {
		t.Fatalf("ping: %v\n%s", err, p.errOut)
	}
	if strings.TrimSpace(p.out.String()) != ok[1] || !strings.Contains(p.errOut.String(), "ok: user mona ("+ok[1]+") at "+env.URL) {
		t.Fatalf("ping: stdout %q stderr %q", p.out, p.errOut)
	}

	// A second set says what it replaces.
	r = newRun(dir, key+"\n")
	if err := apikey.RunSet(context.Background(), &apikey.Options{F: r.f, Server: env.URL + "/mcp"}); err != nil {
		t.Fatal(err)
	}
	if want := `A credential for ` + env.URL + `/mcp is already stored (account "default": API key for mona (` + ok[1] + `), saved `; !strings.Contains(r.errOut.String(), want) {
		t.Fatalf("no replace notice %q:\n%s", want, r.errOut)
	}
}

func TestSetRefusesBadKeysAndURLs(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	good, err := env.Browser("mona").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, server, key string
		code              int
		want              string
	}{
		{"wrong key", env.URL + "/mcp", "mcpa_" + strings.Repeat("x", 43), clierr.ExitAuthRequired, env.URL + "/api/ping refused this API key (HTTP 401): copy it again from the server's Settings page; the key was not stored"},
		{"not MCP", notMCP.URL + "/", good, clierr.ExitNetwork, notMCP.URL + "/ is not an MCP server: " + notMCP.URL + "/mcp answered HTTP 404 (not found). An MCP URL names the server's MCP endpoint, like https://mcp.example.com/mcp; the server's documentation gives its path; the key was not stored"},
		{"unreachable", "http://" + deadAddr + "/mcp", good, clierr.ExitNetwork, "cannot reach " + deadAddr + " (connection refused); the key was not stored"},
		{"not a URL", strings.TrimPrefix(env.URL, "http://"), good, clierr.ExitUsage, "is not a URL; did you mean " + env.URL + "?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t.TempDir(), tt.key+"\n")
			err := apikey.RunSet(context.Background(), &apikey.Options{F: r.f, Server: tt.server})
			if err == nil || !strings.Contains(err.Error(), tt.want) || clierr.CodeFor(err) != tt.code {
				t.Fatalf("got %v (exit %d), want %q (exit %d)", err, clierr.CodeFor(err), tt.want, tt.code)
			}
			if n := r.stored(t); n != 0 {
				t.Fatalf("%d entries stored", n)
			}
		})
	}
}
