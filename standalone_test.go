// Package mcpauth_test holds repository-wide tests; the module root has no
// Go package of its own.
package mcpauth_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStandsAlone fails when a file of the repository refers to the shared
// material this project grew up beside: a public clone has no such sibling
// directory, so scripts, docs and skip messages must name the project's own
// scripts/ and docs/. The patterns are assembled so this file does not
// match itself.
func TestStandsAlone(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is required with CI=true: %v", err)
		}
		t.Skipf("git not found: %v", err)
	}
	// Tracked files plus new ones not ignored, so the test bites before a commit.
	out, err := exec.Command(git, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		t.Fatalf("listing the repository's files with git ls-files: %v", err)
	}
	shared := "shared"
	forbidden := []string{"../" + shared, "/work/" + shared, shared + "/recipes", shared + "/spec"}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 10 {
		t.Fatalf("git ls-files listed %d files; want the whole repository", len(files))
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			for _, f := range forbidden {
				if bytes.Contains(line, []byte(f)) {
					t.Errorf("%s:%d mentions %q; use the project's scripts/ or docs/ instead", name, i+1, f)
				}
			}
		}
	}
}
