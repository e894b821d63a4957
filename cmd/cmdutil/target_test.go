package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestParseTarget(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"http://127.0.0.1:8080/mcp", ""},
		{"https://mcp.example.com/mcp", ""},
		{"127.0.0.1:8080/mcp", `"127.0.0.1:8080/mcp" is not a URL; did you mean http://127.0.0.1:8080/mcp?`},
		{"localhost:8080", `"localhost:8080" is not a URL; did you mean http://localhost:8080?`},
		{"mcp.example.com/mcp", `"mcp.example.com/mcp" is not a URL; did you mean https://mcp.example.com/mcp?`},
		{"ftp://mcp.example.com/mcp", `"ftp://mcp.example.com/mcp" is not an http(s) URL`},
		{"", `"" is not a URL: give the MCP server's URL, e.g. http://127.0.0.1:8080/mcp`},
	} {
		_, err := ParseTarget(tt.arg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.arg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || CodeFor(err) != ExitUsage):
			t.Errorf("%q: got %v (exit %d), want %q and exit 2", tt.arg, err, CodeFor(err), tt.want)
		}
	}
}

func TestCancelledSaysWhat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var p Phase
	p.Set("waiting for the browser")
	if err := Cancelled(ctx, "login", &p, errors.New("other")); err.Error() != "other" {
		t.Fatalf("not cancelled: %v", err)
	}
	cancel()
	err := Cancelled(ctx, "login", &p, fmt.Errorf("auth code flow: %w", context.Canceled))
	if err.Error() != "login cancelled while waiting for the browser" || CodeFor(err) != ExitCancelled {
		t.Fatalf("got %q exit %d", err, CodeFor(err))
	}
	// A context that timed out is not a Ctrl-C.
	tctx, tcancel := context.WithTimeout(context.Background(), 0)
	defer tcancel()
	<-tctx.Done()
	if err := Cancelled(tctx, "login", &p, tctx.Err()); CodeFor(err) == ExitCancelled {
		t.Fatalf("deadline reported as cancelled: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, derr := net.Dial("tcp", addr)
	err = Unreachable("http://"+addr+"/api/ping", fmt.Errorf("ping: %w", derr))
	if want := "cannot reach " + addr + " (connection refused)"; err.Error() != want || CodeFor(err) != ExitNetwork {
		t.Fatalf("got %q exit %d, want %q exit 6", err, CodeFor(err), want)
	}
	if err := Unreachable("https://x.test", errors.New("HTTP 500")); err.Error() != "HTTP 500" {
		t.Fatalf("rewrote an answered request: %v", err)
	}
	// A certificate from an unknown CA names --ca-file.
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	defer tlsSrv.Close()
	_, terr := (&http.Client{}).Get(tlsSrv.URL)
	err = Unreachable(tlsSrv.URL, terr)
	if !strings.Contains(err.Error(), "cannot verify the certificate of "+tlsSrv.Listener.Addr().String()) ||
		!strings.Contains(err.Error(), "pass --ca-file") || CodeFor(err) != ExitNetwork {
		t.Fatalf("got %q exit %d", err, CodeFor(err))
	}
}

func TestPortErrorSuggestsAnother(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	err = CheckPort(port)
	if err == nil || CodeFor(err) != ExitUsage ||
		!strings.Contains(err.Error(), fmt.Sprintf("port %d on 127.0.0.1 is already in use", port)) ||
		!strings.Contains(err.Error(), "try --port ") {
		t.Fatalf("got %v (exit %d)", err, CodeFor(err))
	}
	if err := CheckPort(0); err != nil {
		t.Fatal(err)
	}
}

func TestSecretSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		name  string
		args  []string
		stdin string
		env   map[string]string
		want  string
		err   string
	}{
		{"flag", []string{"--client-secret", "s1"}, "", nil, "s1", ""},
		{"stdin dash", []string{"--client-secret", "-"}, "from-stdin\n", nil, "from-stdin", ""},
		{"file", []string{"--client-secret-file", file}, "", nil, "from-file", ""},
		{"file dash", []string{"--client-secret-file", "-"}, "piped\n", nil, "piped", ""},
		{"env", nil, "", map[string]string{"MCPAUTH_CLIENT_SECRET": "from-env"}, "from-env", ""},
		{"env file", nil, "", map[string]string{"MCPAUTH_CLIENT_SECRET_FILE": file}, "from-file", ""},
		{"flag beats env", []string{"--client-secret", "s1"}, "", map[string]string{"MCPAUTH_CLIENT_SECRET": "from-env"}, "s1", ""},
		{"both", []string{"--client-secret", "s1", "--client-secret-file", file}, "", nil, "", "give --client-secret or --client-secret-file, not both"},
		{"empty stdin", []string{"--client-secret", "-"}, "", nil, "", "--client-secret: standard input is empty"},
		{"missing file", []string{"--client-secret-file", filepath.Join(dir, "nope")}, "", nil, "", "--client-secret-file: open"},
		{"none", nil, "", nil, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env = tt.env
			fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
			var got string
			s := BindSecret(fl, &got, "client-secret", "secret")
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := s.Resolve(strings.NewReader(tt.stdin), getenv)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || CodeFor(err) != ExitUsage):
				t.Fatalf("err %v, want %q (exit 2)", err, tt.err)
			case tt.err != "":
			case err != nil:
				t.Fatal(err)
			case got != tt.want:
				t.Fatalf("secret %q, want %q", got, tt.want)
			}
		})
	}
}
