package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/root"
)

const regenerate = "go run ./tools/gendocs"

// TestReferenceIsFresh fails when docs/cli no longer matches the command
// tree: a flag, a command or a help text changed without regenerating.
func TestReferenceIsFresh(t *testing.T) {
	want := t.TempDir()
	if err := writeMarkdown(want); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join("..", "..", "docs", "cli")
	wantNames, gotNames := mdFiles(t, want), mdFiles(t, got)
	if !slices.Equal(wantNames, gotNames) {
		t.Fatalf("docs/cli holds %v, the command tree gives %v: run %s", gotNames, wantNames, regenerate)
	}
	for _, name := range wantNames {
		w, _ := os.ReadFile(filepath.Join(want, name))
		g, _ := os.ReadFile(filepath.Join(got, name))
		if string(w) != string(g) {
			t.Errorf("docs/cli/%s is stale: run %s", name, regenerate)
		}
	}
}

func mdFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "mcpauth*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}

// TestReferenceMatchesHelp runs `mcpauth ... --help` for every command the
// tree offers and finds its description, usage line and every flag line,
// word for word, on the command's page; hidden commands get no page.
func TestReferenceMatchesHelp(t *testing.T) {
	dir := t.TempDir()
	if err := writeMarkdown(dir); err != nil {
		t.Fatal(err)
	}
	pages := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "_")+".md")
		md, err := os.ReadFile(page)
		if !c.IsAvailableCommand() && c.HasParent() {
			if err == nil {
				t.Errorf("%q is hidden but has a page", c.CommandPath())
			}
			return
		}
		if err != nil {
			t.Errorf("%q has no page: %v", c.CommandPath(), err)
			return
		}
		pages++
		assertHelpOnPage(t, c, helpOf(t, c), string(md))
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree())
	if pages < 15 {
		t.Fatalf("only %d pages checked; the tree has more commands", pages)
	}
}

func helpOf(t *testing.T, c *cobra.Command) string {
	t.Helper()
	args := append(strings.Fields(c.CommandPath())[1:], "--help")
	f, out, errOut := factory()
	// Help wraps to the terminal; the reference does not. A terminal wide
	// enough for any line gives help's words with the page's line breaks.
	f.IO.Width = 1 << 16
	if code := root.Run(context.Background(), f, args); code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errOut)
	}
	return out.String() + errOut.String()
}

func assertHelpOnPage(t *testing.T, c *cobra.Command, help, md string) {
	t.Helper()
	path, checked := c.CommandPath(), 0
	subs := map[string]string{}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			subs[sub.Name()] = sub.Short
		}
	}
	for line := range strings.SplitSeq(help, "\n") {
		trimmed := strings.TrimSpace(line)
		name, _, _ := strings.Cut(trimmed, " ")
		switch {
		// cobra's section titles (Usage:, Flags:) and its closing hint.
		case trimmed == "" || strings.HasSuffix(trimmed, ":") || strings.HasPrefix(trimmed, "Use \""):
			continue
		case trimmed == path+" [command]" && len(subs) > 0:
			continue // the page lists subcommands in SEE ALSO instead
		case name == "help" && !c.HasParent():
			continue // cobra adds its help command only when it runs
		case subs[name] != "" && strings.HasSuffix(trimmed, subs[name]):
			// A subcommand of the list: on the page, a link and its summary.
			link := "[" + path + " " + name + "](" + strings.ReplaceAll(path, " ", "_") + "_" + name + ".md)\t - " + subs[name]
			if !strings.Contains(md, link) {
				t.Errorf("%s --help lists %s, its page has no %q: run %s", path, name, link, regenerate)
			}
		case !strings.Contains(md, trimmed):
			t.Errorf("%s --help says %q, its page does not: run %s", path, trimmed, regenerate)
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("%s --help: nothing checked in %q", path, help)
	}
}
