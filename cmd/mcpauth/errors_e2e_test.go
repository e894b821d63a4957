package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The real binary's exit codes and messages for mistakes users make: the
// exact line on stderr, nothing on stdout.
func TestBinaryErrorMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	for _, tt := range []struct {
		args  []string
		code  int
		lines []string
	}{
		{[]string{"login"}, 2, []string{"mcpauth: missing <mcp-url>, the MCP server's URL: mcpauth login <mcp-url>, e.g. mcpauth login http://127.0.0.1:8080/mcp"}},
		{[]string{"login", "127.0.0.1:8080/mcp"}, 2, []string{`mcpauth: "127.0.0.1:8080/mcp" is not a URL; did you mean http://127.0.0.1:8080/mcp?`}},
		{[]string{"discover", "mcp.example.com/mcp"}, 2, []string{`mcpauth: "mcp.example.com/mcp" is not a URL; did you mean https://mcp.example.com/mcp?`}},
		{[]string{"login", "http://" + deadAddr + "/mcp"}, 6, []string{"mcpauth: cannot reach " + deadAddr + " (connection refused)"}},
		{[]string{"device", notMCP.URL}, 6, []string{"mcpauth: " + notMCP.URL + " is not an MCP server: " + notMCP.URL + "/mcp answered HTTP 404 (not found). An MCP URL names the server's MCP endpoint, like https://mcp.example.com/mcp; the server's documentation gives its path"}},
		{[]string{"apikey", "set", "http://" + deadAddr}, 6, []string{"mcpauth: cannot reach " + deadAddr + " (connection refused); the key was not stored"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "MCPAUTH_CONFIG_DIR="+t.TempDir(), "MCPAUTH_STORAGE=file", "NO_COLOR=1")
			cmd.Stdin = strings.NewReader("mcpa_" + strings.Repeat("x", 43) + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Fatalf("exit %v, want %d\n%s", err, tt.code, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
			got := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.lines, "\n") {
				t.Fatalf("stderr:\n%s\nwant:\n%s", stderr.String(), strings.Join(tt.lines, "\n"))
			}
		})
	}
}

// Ctrl-C (SIGINT) while login waits for a server that never answers: exit
// 130 and what was interrupted, not "context canceled".
func TestBinaryInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	arrived := make(chan struct{}, 1)
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-hang
	}))
	defer srv.Close()
	defer close(hang)
	cmd := exec.Command(bin, "login", srv.URL+"/mcp")
	cmd.Env = append(os.Environ(), "MCPAUTH_CONFIG_DIR="+t.TempDir(), "MCPAUTH_STORAGE=file", "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-arrived
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
	}
	if want := "mcpauth: login cancelled while discovering " + srv.URL + "/mcp\n"; stderr.String() != want {
		t.Fatalf("stderr %q, want %q", stderr.String(), want)
	}
}
