package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Out-of-process mode: the measured server and the bare baseline each run
// as a child process (the mcpauth binary under test, and the bench tool
// re-executed with BaselineArg), so the load generator's goroutines,
// garbage and scheduler do not share a Go runtime with the server it
// measures. In-process mode shares one runtime, which flatters or
// penalises paths depending on how much garbage each side makes.

// BaselineBanner starts the line ServeBaseline prints once it listens.
const BaselineBanner = "bare baseline on "

// BaselineArg makes Options.Baseline serve the bare baseline (a hidden
// flag of tools/bench): the out-of-process baseline's command line.
const BaselineArg = "--baseline-server"

// serveBanner is what `mcpauth serve` prints once it accepts connections.
const serveBanner = "mcpauth reference server on "

// ServeBaseline serves the bare ping handler on a loopback port, prints
// BaselineBanner and its URL to w, and serves until ctx ends: the child
// process of the out-of-process baseline (`bench --baseline-server`).
func ServeBaseline(ctx context.Context, w io.Writer) error {
	base, stop, err := startBaseline()
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(w, "%s%s\n", BaselineBanner, base)
	<-ctx.Done()
	return nil
}

// startBaseline serves the same ping JSON with no authentication, on the
// same kind of listener, with the same response headers.
func startBaseline() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("baseline listener: %w", err)
	}
	body := []byte(`{"status":"ok","user_id":"u_baseline00000000"}` + "\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		h.Set("X-Request-Id", "0000000000000000")
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// child is a server running as a child process.
type child struct {
	cmd  *exec.Cmd
	log  string // its stdout and stderr
	done chan error
}

// startChild runs exe with args, its output in logFile, pinned to cpus
// when given, and waits until a line starting with banner names its URL.
func startChild(ctx context.Context, exe string, args []string, logFile, banner string, cpus []int) (*child, string, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "GOMAXPROCS=") // the child sizes itself
	if err := startPinned(cmd, cpus); err != nil {
		return nil, "", fmt.Errorf("starting %s %s: %w", filepath.Base(exe), strings.Join(args, " "), err)
	}
	c := &child{cmd: cmd, log: logFile, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		b, _ := os.ReadFile(logFile)
		if i := bytes.Index(b, []byte(banner)); i >= 0 {
			line := b[i+len(banner):]
			if j := bytes.IndexByte(line, '\n'); j >= 0 {
				return c, strings.TrimSpace(string(line[:j])), nil
			}
		}
		select {
		case err := <-c.done:
			return nil, "", fmt.Errorf("%s exited before serving (%v): %s", filepath.Base(exe), err, tail(b))
		case <-deadline:
			c.stop()
			return nil, "", fmt.Errorf("%s did not start within 30 s: %s", filepath.Base(exe), tail(b))
		case <-ctx.Done():
			c.stop()
			return nil, "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop asks the child to end (SIGTERM where there is one), then kills it.
func (c *child) stop() {
	if err := interrupt(c.cmd.Process); err != nil {
		_ = c.cmd.Process.Kill()
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "no output"
	}
	return string(b)
}

var errNoExe = errors.New("out-of-process mode needs the baseline's binary (Options.Baseline) and, for the local reference server, mcpauth's (Options.Exe)")
