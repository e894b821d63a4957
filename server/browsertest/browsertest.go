// Package browsertest runs a real headless Chromium for tests, driven over
// the DevTools protocol by chromedp. Start gives a test a fresh browser (own
// profile directory, torn down with the test) and saves a screenshot of the
// page when the test fails.
//
// The binary is $MCPAUTH_CHROMIUM, else chromium on PATH. When neither is
// there the test is skipped, unless CI=true, where a missing browser is a
// failure (tests against real parts must not silently vanish in CI); see
// internal/testenv, whose Main every package using Require must run.
// scripts/install-chromium.sh installs it and prints the path.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/internal/chromium"
	"github.com/mcpauth/mcpauth/internal/testenv"
)

// EnvChromium names the Chromium binary; EnvArtifacts the screenshot folder.
const (
	EnvChromium  = chromium.EnvBinary
	EnvArtifacts = "MCPAUTH_ARTIFACTS"
)

// DefaultTimeout bounds everything a test does with its browser.
const DefaultTimeout = 30 * time.Second

// Lookup finds the Chromium binary: $MCPAUTH_CHROMIUM when set (and then
// only that; a wrong setting is an error rather than a silent fallback),
// else chromium on PATH (internal/chromium, which the conformance suite's
// browser approver shares).
func Lookup() (string, error) {
	return chromium.Lookup("", os.Getenv)
}

// Require returns the Chromium binary, or skips the test when there is none
// (fails it when CI=true). With -short it always skips: browser tests are
// the slow end of the suite, kept out of the contributors' fast loop.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	p, err := Lookup()
	if err != nil {
		testenv.Missing(t, testenv.Chromium, err.Error())
	}
	return p
}

// Options tune Start. The zero value is a 1280x800 desktop window and
// DefaultTimeout.
type Options struct {
	// Timeout bounds the returned context; zero means DefaultTimeout.
	Timeout time.Duration
}

// Launch starts headless Chromium at bin with a fresh profile in dataDir,
// using the flags that work on these machines, and returns its first tab.
// Cancel the returned func to stop the browser. Start wraps it for tests;
// programs (the e2e browser driver) call it directly.
func Launch(bin, dataDir string) (context.Context, context.CancelFunc, error) {
	allocOpts := append(chromium.Options(bin, dataDir),
		chromedp.NoSandbox, // containers have no user namespaces for the sandbox
		// Tests reach loopback only: any other host name fails to resolve in
		// the browser, so a redirect that escapes (an open-redirect test
		// failing) cannot send traffic off this machine.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE [::1]"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	// The first Do starts the browser and binds its life to tab, so it must
	// not carry a timeout (chromedp docs, "Set a timeout for one action");
	// chromedp bounds the start itself (20 s to read the DevTools address).
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		cancelAlloc()
		return nil, nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return tab, func() { cancelTab(); cancelAlloc() }, nil
}

// Start launches Chromium for t and returns the context of its first tab,
// with the test's deadline. Pass it to chromedp.Do and chromedp.Run. The
// browser stops when the test ends; if the test failed, a screenshot of the
// page is saved and the page's console messages are logged first.
func Start(t testing.TB, opts Options) context.Context {
	t.Helper()
	bin := Require(t)
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	tab, stop, err := Launch(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu      sync.Mutex
		console []string
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(tab) {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.String())
			mu.Unlock()
		}
	}()

	ctx, cancel := context.WithTimeout(tab, opts.Timeout)
	t.Cleanup(func() {
		cancel()
		if t.Failed() {
			sctx, scancel := context.WithTimeout(tab, 10*time.Second)
			Screenshot(t, sctx, "failure")
			scancel()
			mu.Lock()
			for _, line := range console {
				t.Logf("browser console: %s", line)
			}
			mu.Unlock()
		}
		stop() // waits for the browser process to exit
		<-done
	})
	return ctx
}

// ArtifactsDir is where screenshots go: $MCPAUTH_ARTIFACTS, else
// mcpauth-artifacts in the system temporary directory.
func ArtifactsDir() string {
	if d := os.Getenv(EnvArtifacts); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "mcpauth-artifacts")
}

// Screenshot saves a full-page PNG of the tab in ctx as
// <ArtifactsDir>/<test name>-<name>.png, logs the path and returns it. A
// screenshot that cannot be taken is a test error.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	path, err := saveScreenshot(ctx, ArtifactsDir(), fileName(t.Name()+"-"+name)+".png")
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	t.Logf("screenshot: %s", path)
	return path
}

func saveScreenshot(ctx context.Context, dir, file string) (string, error) {
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100 means PNG
	if err != nil {
		return "", fmt.Errorf("capturing: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating artifacts directory: %w", err)
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "", fmt.Errorf("writing: %w", err)
	}
	return path, nil
}

// fileName keeps letters, digits, '-', '_' and '.' of a test name.
func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	return strings.Trim(s, ".")
}

// Click clicks the element sel once it is visible and its page has finished
// loading. chromedp clicks at the element's centre as laid out at that
// moment; a click sent while the page's stylesheet is still loading can land
// where the button was before the styles moved it, and then nothing is
// submitted. Waiting for readyState "complete" (stylesheets and images in)
// makes the layout the one a person would click on.
func Click(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var none chromedp.Void
		if _, err := chromedp.WaitVisible(chromedp.CSS(sel))(ctx, t); err != nil {
			return none, fmt.Errorf("waiting for %s: %w", sel, err)
		}
		loaded := chromedp.Poll[chromedp.Void](`document.readyState === "complete"`, chromedp.WithPollingInterval(20*time.Millisecond))
		if _, err := loaded(ctx, t); err != nil {
			return none, fmt.Errorf("waiting for the page with %s to load: %w", sel, err)
		}
		return chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)(ctx, t)
	}
}
