// Package chromium finds the Chromium binary and the flags it starts with,
// for the browser tests (server/browsertest) and for the conformance
// suite's browser approver, so both find and start the same browser.
package chromium

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// EnvBinary names the environment variable that names the Chromium binary.
const EnvBinary = "MCPAUTH_CHROMIUM"

// names are the binaries looked for on PATH, most specific first: Debian's
// package, other distributions', Google's build.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Lookup finds the Chromium binary: explicit when given, else the one
// getenv(EnvBinary) names (and then only that: a wrong setting is an error
// rather than a silent fallback), else the first of chromium,
// chromium-browser, google-chrome on PATH.
func Lookup(explicit string, getenv func(string) string) (string, error) {
	from := "--chromium"
	if explicit == "" && getenv != nil {
		explicit, from = getenv(EnvBinary), EnvBinary
	}
	if explicit != "" {
		abs, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("%s=%q is not an executable: %w", from, explicit, err)
		}
		return abs, nil
	}
	var err error
	for _, n := range names {
		var p string
		if p, err = exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium, chromium-browser or google-chrome on PATH (set %s to the binary): %w", EnvBinary, err)
}

// Options are the allocator options both the tests and the approver start
// Chromium with: bin, a fresh profile in dataDir, no QUIC and no component
// updates (no traffic of its own), a desktop window. The sandbox is off
// only for root, whom Chromium refuses to run sandboxed (CI, containers).
func Options(bin, dataDir string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(dataDir),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}
