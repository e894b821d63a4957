package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// TestHelperServe is not a test: run as a child process with
// MCPAUTH_SERVE_HELPER=1 it is `mcpauth serve`, configured through the
// MCPAUTH_* environment.
func TestHelperServe(t *testing.T) {
	if os.Getenv("MCPAUTH_SERVE_HELPER") != "1" {
		t.Skip("helper process for TestSecondProcessOnOneSQLiteFileRefused")
	}
	f := cmdutil.New(&cmdutil.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Getenv)
	cmd := NewCmd(f, nil)
	cmd.SetArgs([]string{}) // not the test binary's -test.* flags
	cmd.SilenceUsage = true
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveProcess runs the test binary as `mcpauth serve` on db and reports
// either that it started (its banner on stderr; it is then stopped) or how
// it exited.
func serveProcess(t *testing.T, db string, env ...string) (started bool, output string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperServe$")
	cmd.Env = append(os.Environ(), "MCPAUTH_SERVE_HELPER=1", "MCPAUTH_DB="+db,
		"MCPAUTH_ADDR=127.0.0.1:0", "MCPAUTH_DEV_IDP_ADDR=127.0.0.1:0", "MCPAUTH_LOG_LEVEL=error")
	cmd.Env = append(cmd.Env, env...) // the last value of a key wins
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "mcpauth reference server on") {
			started = true
			_ = cmd.Process.Signal(os.Interrupt)
			break
		}
	}
	go func() { _, _ = bufio.NewReader(stderr).WriteTo(&bytes.Buffer{}) }() // drain until exit
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("serve process did not finish in time:\n%s", out.String())
	}
	if !started && err == nil {
		t.Fatalf("serve process exited 0 without starting:\n%s", out.String())
	}
	return started, out.String()
}

// A second server process on the SQLite file a running one uses is refused
// (each would cache credentials and miss the other's revocations); once the
// first stops, a new one starts.
func TestSecondProcessOnOneSQLiteFileRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mcpauth.db")
	ios, _, _, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- Run(ctx, &Options{
			IO: ios, Getenv: func(string) string { return "" },
			Addr: "127.0.0.1:0", DevIdPAddr: "127.0.0.1:0", DB: db, LogFormat: "text", LogLevel: "error",
			Ready: func(base string) { ready <- base },
		})
	}()
	stopFirst := func() {
		if cancel == nil {
			return
		}
		cancel()
		cancel = nil
		if err := <-done; err != nil {
			t.Errorf("first server: %v", err)
		}
	}
	t.Cleanup(stopFirst)
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("first server did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("first server did not start within 30 s")
	}

	started, out := serveProcess(t, db)
	if started {
		t.Fatalf("a second process started on the same SQLite file:\n%s", out)
	}
	// The quick local fix comes first, then the cluster one.
	last := -1
	for _, want := range []string{"already using " + db, "--db ./other.db", "--db :memory:", "PostgreSQL", "--db postgres://"} {
		i := strings.Index(out, want)
		if i < 0 || i < last {
			t.Errorf("refusal does not say %q after what came before:\n%s", want, out)
		}
		last = i
	}

	stopFirst()
	if started, out := serveProcess(t, db); !started {
		t.Fatalf("after the first stopped, a new process did not start:\n%s", out)
	}
}

// The default database directory is created owner-only.
func TestDefaultDBDirOwnerOnly(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	path, err := dbPath("", func(k string) string { return map[string]string{"XDG_DATA_HOME": data}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "mcpauth", "mcpauth.db"); path != want {
		t.Errorf("dbPath = %s, want %s", path, want)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("%s: mode %#o, want 0700", filepath.Dir(path), perm)
	}
}

// A busy port is refused naming --addr with a port that is free, for the
// main listener and for metrics; the busy port is a real listener.
func TestBusyPortSuggestsAnother(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct{ flag, env string }{
		{"--addr", "MCPAUTH_ADDR"},
		{"--metrics-addr", "MCPAUTH_METRICS_ADDR"},
	} {
		started, out := serveProcess(t, ":memory:", tc.env+"="+busy.Addr().String())
		if started {
			t.Fatalf("%s: started on a busy port:\n%s", tc.flag, out)
		}
		m := regexp.MustCompile(regexp.QuoteMeta(busy.Addr().String()+" is already in use") + `.*e\.g\. ` + regexp.QuoteMeta(tc.flag) + ` (127\.0\.0\.1:\d+) \(free just now\)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: refusal does not suggest a free port:\n%s", tc.flag, out)
		}
		t.Logf("%s refused: %s", tc.flag, strings.TrimSpace(out))
		if m[1] == busy.Addr().String() {
			t.Fatalf("%s: suggested the busy port itself:\n%s", tc.flag, out)
		}
		ln, err := net.Listen("tcp", m[1])
		if err != nil {
			t.Errorf("%s: the suggested %s is not free: %v", tc.flag, m[1], err)
			continue
		}
		ln.Close()
	}
}
