package browsertest

import (
	"bytes"
	"errors"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// noBrowserEnv hides every Chromium: a bogus MCPAUTH_CHROMIUM and a PATH
// that is an empty directory.
func noBrowserEnv(t *testing.T) {
	t.Setenv(EnvChromium, "")
	t.Setenv("PATH", t.TempDir())
}

func TestLookup(t *testing.T) {
	t.Run("missing from PATH", func(t *testing.T) {
		noBrowserEnv(t)
		_, err := Lookup()
		if !errors.Is(err, exec.ErrNotFound) {
			t.Fatalf("Lookup() error = %v, want exec.ErrNotFound", err)
		}
	})
	t.Run("env names a missing file", func(t *testing.T) {
		t.Setenv(EnvChromium, "/nonexistent/chromium")
		if p, err := Lookup(); err == nil || !strings.Contains(err.Error(), EnvChromium) {
			t.Fatalf("Lookup() = %q, %v; want an error naming %s", p, err, EnvChromium)
		}
	})
	t.Run("env names a non-executable file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "chromium")
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(EnvChromium, f)
		if _, err := Lookup(); err == nil {
			t.Fatal("Lookup() accepted a file without the executable bit")
		}
	})
	t.Run("env wins over PATH", func(t *testing.T) {
		dir := t.TempDir()
		onPath := filepath.Join(dir, "chromium")
		named := filepath.Join(t.TempDir(), "my-chromium")
		for _, f := range []string{onPath, named} {
			if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("PATH", dir)
		t.Setenv(EnvChromium, "")
		if p, err := Lookup(); err != nil || p != onPath {
			t.Fatalf("Lookup() = %q, %v; want %q from PATH", p, err, onPath)
		}
		t.Setenv(EnvChromium, named)
		if p, err := Lookup(); err != nil || p != named {
			t.Fatalf("Lookup() = %q, %v; want %q from %s", p, err, named, EnvChromium)
		}
	})
}

// TestRequireHelper is run in a child process by TestRequireWithoutBrowser.
func TestRequireHelper(t *testing.T) {
	if os.Getenv("BROWSERTEST_CHILD") != "1" {
		t.Skip("run by TestRequireWithoutBrowser")
	}
	Require(t)
	t.Log("Require returned")
}

// TestRequireWithoutBrowser runs Require in a child test process (the real
// testing package decides skip or fail) with no browser anywhere.
func TestRequireWithoutBrowser(t *testing.T) {
	for _, tc := range []struct {
		ci, chromium string
		want         string
	}{
		{"", "", "--- SKIP: TestRequireHelper"},
		{"false", "", "--- SKIP: TestRequireHelper"},
		{"", "/nonexistent", "--- SKIP: TestRequireHelper"},
		{"true", "", "--- FAIL: TestRequireHelper"},
		{"true", "/nonexistent", "--- FAIL: TestRequireHelper"},
	} {
		t.Run("CI="+tc.ci+",chromium="+tc.chromium, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRequireHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "BROWSERTEST_CHILD=1", "CI="+tc.ci, EnvChromium+"="+tc.chromium, "PATH="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "Require returned") {
				t.Fatalf("child (err %v) output:\n%s\nwant %q", err, out, tc.want)
			}
			if tc.ci == "true" && err == nil {
				t.Fatal("child passed; want a failing exit status with CI=true")
			}
		})
	}
}

func TestStartAndScreenshot(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>hello</title><p id="p" style="height:2000px">hi</p>`))
	}))
	defer ts.Close()
	t.Setenv(EnvArtifacts, t.TempDir())

	ctx := Start(t, Options{})
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("p")))
	if err != nil || text != "hi" {
		t.Fatalf("text = %q, %v", text, err)
	}
	path := Screenshot(t, ctx, "page")
	if filepath.Dir(path) != os.Getenv(EnvArtifacts) {
		t.Fatalf("screenshot at %s, want it in %s", path, os.Getenv(EnvArtifacts))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	// Full page: taller than the 800 px window because the page is 2000 px.
	if cfg.Height < 2000 {
		t.Fatalf("screenshot is %dx%d; want the full 2000+ px page", cfg.Width, cfg.Height)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"TestX/sub case-1": "TestX_sub_case-1",
		"../../etc/passwd": "_.._etc_passwd",
		"a\x00b":           "a_b",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}
