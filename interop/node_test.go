package interop

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// nodeProc is a Node.js program of the lab, started by a test and stopped
// when the test ends; its output is logged if the test failed.
type nodeProc struct {
	name   string
	out    *syncbuf.Buffer
	exited chan struct{}
}

// refreshLine is what the lab's AS scripts print for each refresh grant
// they answer.
const refreshLine = "GRANT refresh_token"

// count is how many lines of the output so far contain s.
func (p *nodeProc) count(s string) int { return strings.Count(p.out.String(), s) }

// startNode runs `node args…` in dir with env added, handing ln over as
// file descriptor 3 (so the port it listens on was chosen by the test and
// nobody can take it in between), and waits until ready answers 200.
func startNode(t *testing.T, name, dir string, args, env []string, ln *net.TCPListener, ready string) *nodeProc {
	t.Helper()
	return startProgram(t, name, "node", dir, args, env, ln, ready)
}

// startProgram is startNode for any program of the lab (Ory Hydra's binary
// too, which binds its ports itself: ln nil).
func startProgram(t *testing.T, name, program, dir string, args, env []string, ln *net.TCPListener, ready string) *nodeProc {
	t.Helper()
	p := &nodeProc{name: name, out: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if ln != nil {
		f, err := ln.File()
		if err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles = []*os.File{f}
		defer f.Close()
		defer ln.Close()
	}
	// Its own process group, so that stopping it stops what it started
	// (wrangler's workerd).
	tsserver.SetProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		tsserver.StopProcessGroup(cmd, p.exited)
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := tsserver.Get200(hc, ready)
		if err == nil {
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before serving %s:\n%s", name, ready, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not serve %s within 60s (%v):\n%s", name, ready, err, p.out.String())
		}
	}
}

// loopback opens a listener on a free 127.0.0.1 port.
func loopback(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln.(*net.TCPListener)
}

func urlOf(ln net.Listener) string { return "http://" + ln.Addr().String() }

// runNode runs a Node.js program to its end and returns its exit code and
// output.
func runNode(ctx context.Context, dir string, args, env []string) (int, string, error) {
	cmd := nodeCommand(ctx, dir, args, env...)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), nil
	}
	return 0, out.String(), err
}

// nodeCommand is `node args…` in dir with env added, killed with ctx.
func nodeCommand(ctx context.Context, dir string, args []string, env ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// freePort is a loopback port nobody listens on right now, for a client
// that insists on binding its callback port itself.
func freePort(t *testing.T) string {
	t.Helper()
	ln := loopback(t)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
