package mcpauth_test

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpauth/mcpauth/"

// goList runs `go list` with args from the module root and returns the
// import paths it prints, one a line.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("go is required with CI=true: %v", err)
		}
		t.Skipf("go not found: %v", err)
	}
	out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// The development and release tools (the benchmark and its load
// generator, the image builder) live under tools/ so that no user's
// binary links them.
func TestBinaryLinksNoTools(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/mcpauth")
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./cmd/mcpauth listed %d packages", len(deps))
	}
	for _, p := range deps {
		own := strings.HasPrefix(p, module)
		if own && strings.HasPrefix(p, module+"tools/") || strings.Contains(p, "bench") || strings.Contains(p, "loadgen") {
			t.Errorf("mcpauth links %s, a tool's package", p)
		}
	}
}

// internal/ holds libraries and test helpers: none of them may pull in the
// reference server or the conformance suite, which sit above them.
func TestInternalImportsNoServer(t *testing.T) {
	// One line a package: its path, then every package it depends on.
	lines := goList(t, "-f", "{{.ImportPath}}:{{range .Deps}} {{.}}{{end}};", "./internal/...")
	pkg := ""
	for _, f := range lines {
		if p, ok := strings.CutSuffix(f, ":"); ok {
			pkg = p
			continue
		}
		if dep := strings.TrimSuffix(f, ";"); dep == module+"server" || dep == module+"conformance" {
			t.Errorf("%s depends on %s", pkg, dep)
		}
	}
	if pkg == "" {
		t.Fatal("go list ./internal/... listed no package")
	}
}

// The stored-credential lifecycle sits between the protocol and the
// storage: creds builds on flows and keyring and never reaches up into the
// CLI or the server, and keyring, storage only, depends on nothing of ours.
// The library's unexported helpers live in internal/oauthwire (the wire,
// under flows), internal/probe (checking a login, over flows) and
// internal/keyfile (refusing a key file others may read).
func TestCredsBetweenFlowsAndKeyring(t *testing.T) {
	allowed := map[string][]string{
		"flows":   {"internal/oauthwire", "pkce"},
		"creds":   {"flows", "internal/keyfile", "internal/oauthwire", "internal/probe", "keyring", "pkce"},
		"keyring": nil,
	}
	for pkg, ok := range allowed {
		for _, dep := range goList(t, "-deps", "./"+pkg) {
			name, own := strings.CutPrefix(dep, module)
			if !own || name == pkg {
				continue
			}
			if !slices.Contains(ok, name) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
