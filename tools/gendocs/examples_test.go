package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/testenv"
)

// runnableFence opens a block the docs promise runs as written.
const runnableFence = "```sh runnable"

// browserEnv makes this test binary the person's browser for `mcpauth
// login` (MCPAUTH_BROWSER): it signs in at the server whose base URL the
// variable holds and approves, as a person reading the tour would.
const browserEnv = "MCPAUTH_DOCS_BROWSER"

func TestMain(m *testing.M) {
	if base := os.Getenv(browserEnv); base != "" {
		if err := browse(base, os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintf(os.Stderr, "docs browser: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

func browse(base, authURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := approve.NewFormApprover(base, "reader", nil)
	if err != nil {
		return err
	}
	return a.Browse(ctx, authURL)
}

// example is one runnable block and where it is.
type example struct {
	where  string // file:line
	script string
}

// examples returns the runnable blocks of README.md and docs/*.md, in
// order: a block may rely on what an earlier one did (a login, then ping).
func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	var all []example
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		var cur *example
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case cur == nil && strings.TrimSpace(line) == runnableFence:
				cur = &example{where: fmt.Sprintf("%s:%d", name, n)}
			case cur != nil && strings.TrimSpace(line) == "```":
				all = append(all, *cur)
				cur = nil
			case cur != nil:
				cur.script += line + "\n"
			}
		}
		if cur != nil {
			t.Fatalf("%s: runnable block never closed", cur.where)
		}
	}
	return all
}

// TestExamplesRun runs every runnable block, in a shell, with the built
// mcpauth first on PATH, against a `mcpauth serve --test-clock` on a free
// loopback port (the blocks' 127.0.0.1:8080 becomes its address) with
// SQLite in a temp dir, and file storage in a temp config dir.
func TestExamplesRun(t *testing.T) {
	blocks := examples(t)
	if testing.Short() {
		t.Skip("-short: builds mcpauth and runs the examples against it")
	}
	inREADME := 0
	for _, b := range blocks {
		if strings.HasPrefix(b.where, "README.md:") {
			inREADME++
		}
	}
	if inREADME < 3 {
		t.Fatalf("README.md has %d runnable blocks; its tour (server, login, conformance) should have 3", inREADME)
	}
	for _, tool := range []string{"go", "bash", "curl", "openssl"} { // openssl: docs/machines.md makes keys
		if _, err := exec.LookPath(tool); err != nil {
			if testenv.CI() {
				t.Fatalf("%s is required with CI=true: %v", tool, err)
			}
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	start := time.Now()
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "mcpauth"), "../../cmd/mcpauth").CombinedOutput(); err != nil {
		t.Fatalf("building mcpauth: %v\n%s", err, out)
	}
	addr, serverLog := serve(t, filepath.Join(bin, "mcpauth"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"MCPAUTH_STORAGE=file",
		"MCPAUTH_CONFIG_DIR=" + t.TempDir(),
		"MCPAUTH_BROWSER=" + self,
		browserEnv + "=http://" + addr,
		"NO_COLOR=1",
	}
	work := t.TempDir()
	for _, b := range blocks {
		script := strings.ReplaceAll(b.script, "127.0.0.1:8080", addr)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\n--- block:\n%s--- output:\n%s--- server:\n%s", b.where, err, script, out, serverLog)
			continue
		}
		t.Logf("%s ran:\n%s", b.where, out)
	}
	t.Logf("%d runnable blocks (%d in README.md) in %v", len(blocks), inREADME, time.Since(start).Round(time.Millisecond))
}

// serve starts `mcpauth serve` on a free loopback port, waits until it
// answers and stops it when the test ends.
func serve(t *testing.T, mcpauth string) (string, *bytes.Buffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var log bytes.Buffer
	srv := exec.Command(mcpauth, "serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "mcpauth.db"), "--test-clock")
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return addr, &log
		}
		if i > 200 {
			t.Fatalf("mcpauth serve did not answer:\n%s", log.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}
