package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaser is the part of .goreleaser.yaml the release files depend on.
type goreleaser struct {
	Before struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Archives []struct {
		Files []string `yaml:"files"`
	} `yaml:"archives"`
}

// TestReleaseShipsManPagesAndCompletions reads .goreleaser.yaml (goreleaser
// itself is not installed here), runs the generator with the arguments of
// its hook into a temp dir, and checks every archive picks up what it wrote.
func TestReleaseShipsManPagesAndCompletions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaser
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	var args []string
	for _, h := range cfg.Before.Hooks {
		if rest, ok := strings.CutPrefix(h, "go run ./tools/gendocs "); ok {
			args = strings.Fields(rest)
		}
	}
	if args == nil {
		t.Fatalf("no `go run ./tools/gendocs` in before.hooks %q", cfg.Before.Hooks)
	}
	// Run the hook in a temp dir, with goreleaser's templates filled in.
	dir := t.TempDir()
	t.Chdir(dir)
	if slices.Contains(args, "{{") {
		t.Fatalf("write the hook's templates without inner spaces ({{.Version}}), so its words split: %q", args)
	}
	if err := run(fillTemplates(args)); err != nil {
		t.Fatalf("gendocs %q: %v", args, err)
	}
	var written []string
	filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			written = append(written, p)
		}
		return err
	})
	for _, want := range []string{"man/mcpauth.1", "man/mcpauth-login.1", "man/mcpauth-serve.1", "man/mcpauth-config-get.1", "completions/mcpauth.bash", "completions/mcpauth.zsh", "completions/mcpauth.fish"} {
		if fi, err := os.Stat(want); err != nil || fi.Size() == 0 {
			t.Errorf("the hook wrote no %s (or an empty one): %v", want, err)
		}
	}
	man, _ := os.ReadFile("man/mcpauth-login.1")
	if !strings.Contains(string(man), "--client-credentials") || !strings.Contains(string(man), "Nov 2026") {
		t.Errorf("man/mcpauth-login.1 lacks its flags or the commit date:\n%.400s", man)
	}
	if len(cfg.Archives) == 0 {
		t.Fatal("no archives")
	}
	for i, a := range cfg.Archives {
		for _, p := range written {
			if !slices.ContainsFunc(a.Files, func(glob string) bool { ok, _ := filepath.Match(glob, p); return ok }) {
				t.Errorf("archive %d: files %q do not include %s", i, a.Files, p)
			}
		}
	}
}

// fillTemplates replaces goreleaser's templates with sample values.
func fillTemplates(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		switch a {
		case "{{.Version}}":
			out[i] = "1.2.3"
		case "{{.CommitDate}}":
			out[i] = "2026-11-27T10:00:00Z"
		}
	}
	return out
}
