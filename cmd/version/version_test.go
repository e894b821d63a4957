package version_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/version"
)

func TestInfoString(t *testing.T) {
	got := version.Info{Version: "v1.2.3", Commit: "0123456789abcdef0123", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"}.String()
	if want := "mcpauth v1.2.3 (commit 0123456789ab-dirty) go1.26.8 linux/amd64"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := (version.Info{Version: "dev", Go: "go1.26.8", Platform: "linux/arm64"}).String(); got != "mcpauth dev go1.26.8 linux/arm64" {
		t.Fatalf("without a commit: %q", got)
	}
}

// A binary built from this checkout, with the version a release sets by
// -ldflags, reports that version, the commit it was built from and its Go.
func TestBuiltBinaryReportsBuildInfo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed for VCS stamping")
	}
	bin := filepath.Join(t.TempDir(), "mcpauth")
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.version=v9.9.9", "-o", bin, "../mcpauth")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	want := regexp.MustCompile(`^mcpauth v9\.9\.9 \(commit ([0-9a-f]{12})(-dirty)?\) go1\.\d+(\.\d+)? [a-z0-9]+/[a-z0-9]+\n$`)
	m := want.FindStringSubmatch(string(out))
	if m == nil || !strings.HasPrefix(string(head), m[1]) {
		t.Fatalf("version printed %q (HEAD %s)", out, strings.TrimSpace(string(head)))
	}
}
