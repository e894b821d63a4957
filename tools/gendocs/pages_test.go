package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pages are the hand-written docs: README.md, the front page, and one page
// per part (docs/service.md and docs/decisions.md keep their own shape).
var pages = []string{"README.md", "docs/cli.md", "docs/machines.md", "docs/proxy.md", "docs/hosts.md", "docs/conformance.md", "docs/server.md", "docs/development.md", "docs/library.md", "docs/interop.md"}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestFrontPageIsShort keeps README.md a front page: at most 15 KB, prose
// lines of readable length, and the two commands for a new machine exactly
// as .ci/run and newcomers rely on them.
func TestFrontPageIsShort(t *testing.T) {
	readme := readDoc(t, "README.md")
	if len(readme) > 15*1024 {
		t.Errorf("README.md is %d bytes, over 15 KB: move the detail to a page under docs/", len(readme))
	}
	for _, cmd := range []string{"```sh\ngo run ./cmd/mcpauth serve\n```", "```sh\ngo test -race ./...\n```"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md lost %q", cmd)
		}
	}
	for _, name := range pages {
		fence, generated := false, false
		for i, line := range strings.Split(readDoc(t, name), "\n") {
			switch {
			case strings.HasPrefix(line, "```"):
				fence = !fence
			case strings.HasPrefix(line, "<!-- interop table: written by"):
				generated = true // the interop lab writes its notes whole
			case strings.HasPrefix(line, "<!-- end of interop table"):
				generated = false
			}
			// Table rows cannot be wrapped in Markdown.
			if !fence && !generated && !strings.HasPrefix(line, "|") && len(line) > 420 {
				t.Errorf("%s:%d is %d characters: split it into paragraphs or a list", name, i+1, len(line))
			}
		}
	}
}

// TestPagesSayWhatTheyCover: every page under docs/ opens, after its
// title, with a paragraph saying what it covers.
func TestPagesSayWhatTheyCover(t *testing.T) {
	for _, name := range pages[1:] {
		title, rest, _ := strings.Cut(readDoc(t, name), "\n\n")
		first, _, _ := strings.Cut(rest, "\n\n")
		if !strings.HasPrefix(title, "# ") || !strings.HasPrefix(first, "This page covers ") {
			t.Errorf("%s opens with %q then %.60q; want a title, then \"This page covers …\"", name, title, first)
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#+ (.*)$`)
	notWord = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// TestDocsLinksResolve follows every relative link of README.md and docs/
// (the generated reference included) to a file that exists and, with a
// #fragment, to a heading of that file, as GitHub names its anchors.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "..", "docs", "cli", "*.md"))
	files = append(append([]string{filepath.Join("..", "..", "README.md")}, files...), more...)
	links := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, frag, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s: %v", f, target, err)
				continue
			}
			if frag != "" && !anchorsOf(t, dest)[frag] {
				t.Errorf("%s links to %s: no heading makes #%s", f, target, frag)
			}
		}
	}
	if links < 30 {
		t.Fatalf("only %d relative links found", links)
	}
}

func anchorsOf(t *testing.T, path string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors, fence := map[string]bool{}, false
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if m := heading.FindStringSubmatch(line); m != nil && !fence {
			a := notWord.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
			anchors[strings.ReplaceAll(a, " ", "-")] = true
		}
	}
	return anchors
}
